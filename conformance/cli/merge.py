"""``drift-conformance merge RESULT... [--out result.json]``: a sharded run's result."""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli.common import Command, Failure, corpus_folders, err


@click.command("merge", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=Path("result.json"),
              show_default=True, help="Write the merged result.json here.")
@click.option("--records-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("drift-runs"),
              show_default=True, help="Where the merged run's records go; also searched for the shards' run folders.")
@click.option("--fixtures", "fixtures", type=click.Path(file_okay=False, path_type=Path),
              help="The shards' fixture folder (default: the one their receipt names, else the committed corpus).")
@click.option("--gold", "gold", type=click.Path(file_okay=False, path_type=Path), help="Its gold folder.")
@click.option("--allow-other-code", is_flag=True,
              help="Re-score shards that ran other suite code than this one (refused by default; the receipt "
                   "names both).")
@click.option("--json", "as_json", is_flag=True, help="Print the merged result.json to stdout instead of the table.")
@click.option("--wide", is_flag=True, help="Print every table in full.")
@click.option("-q", "--quiet", is_flag=True, help="No log lines.")
def merge_cmd(results, out, records_dir, fixtures, gold, allow_other_code, as_json, wide, quiet):
    """Rebuild one run's result from the results of its shards (`--shard I/N`), re-scored from
    their records: every interval as the unsharded run gives it. Refuses shards of different
    runs (options, corpus, seed, code), a shard given twice, records changed since their shard
    ran (records_sha256), shards run by other code than this, and names missing shards.

    \b
    drift-conformance --adapter keyword --split ci --shard 1/2 --out s1.json
    drift-conformance --adapter keyword --split ci --shard 2/2 --out s2.json
    drift-conformance merge s1.json s2.json --out result.json
    """
    from conformance.cli.main import _publish
    from conformance.runner.merge import merge_shards

    folders = corpus_folders(fixtures, gold) if fixtures is not None or gold is not None else None
    log = (lambda msg: None) if quiet else (lambda msg: err.print(msg, style="dim", markup=False, highlight=False))
    doc = merge_shards(list(results), records_dir=records_dir, folders=folders, records_dirs=(records_dir,),
                       allow_other_code=allow_other_code, log=log)
    _publish(doc, out, as_json, wide)
    if not doc.complete:
        raise Failure(f"the merged run is incomplete: {len(doc.errors)} errors (see `errors` in {out})")

"""Print the headline figures of every system in a result.json, and its audit outcome.

Usage: python bench/attacks/compare.py /tmp/adv-N.json
"""

import json
import sys

METRICS = ("accuracy", "recall_at_k", "recall_any_at_k", "recall_all_in_budget", "selectivity",
           "storage_tokens_per_session", "tes", "mvot", "drift_c", "drift_e")


def fmt(m):
    if m is None or m.get("value") is None:
        return "n/a"
    return f"{m['value']:.3f}"


def main(path):
    doc = json.load(open(path))
    print("system".ljust(22) + "".join(n[:12].rjust(13) for n in METRICS) + "  audit")
    for label, s in doc["systems"].items():
        audit = s.get("state_audit") or {}
        ok = "-" if not audit else ("pass" if audit.get("passed") else "FAIL")
        print(label.ljust(22) + "".join(fmt(s["metrics"].get(n)).rjust(13) for n in METRICS)
              + f"  {ok} findings={len(s.get('findings') or [])}")
        for line in (audit.get("findings") or []) + (s.get("findings") or []):
            print("    " + line[:160])
    checks = doc.get("instrument_checks") or {}
    print("instrument checks passed:", checks.get("passed"), "complete:", doc.get("complete"),
          "errors:", len(doc.get("errors") or []))
    for c in checks.get("checks", []):
        if not c["passed"]:
            print("    " + c["detail"])


if __name__ == "__main__":
    main(sys.argv[1])

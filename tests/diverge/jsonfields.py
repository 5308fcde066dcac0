"""jsonfields.py FILE PATH=VALUE ...: check fields of a JSON file (hlorun's
--report) against values worked out by hand. PATH is dotted keys and [N]
list indexes ("first_divergence.counterpart.line", "stages[0].file");
VALUE is JSON (3, "b", null, true) or, after ~=, text the field's string
must contain; PATH? alone: the field must be absent. Prints one line per
check; exit 0 when all hold, 1 otherwise (2: the file is not JSON)."""
import json
import re
import sys


def lookup(doc, path):
    cur = doc
    for key, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        if key:
            if not isinstance(cur, dict) or key not in cur:
                raise KeyError(path)
            cur = cur[key]
        else:
            if not isinstance(cur, list) or int(index) >= len(cur):
                raise KeyError(path)
            cur = cur[int(index)]
    return cur


def main(argv):
    try:
        with open(argv[1]) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"FAIL: {argv[1]}: {e}")
        return 2
    bad = 0
    for check in argv[2:]:
        if check.endswith("?"):
            try:
                lookup(doc, check[:-1])
                ok, got = False, "present"
            except KeyError:
                ok, got = True, "absent"
        else:
            contains = "~=" in check
            path, want = check.split("~=" if contains else "=", 1)
            try:
                got = lookup(doc, path)
            except KeyError:
                print(f"FAIL: {path}: missing in {argv[1]}")
                bad += 1
                continue
            if contains:
                ok = isinstance(got, str) and want in got
            else:
                want = json.loads(want)
                # 18 and 18.0 are one number; True is not 1.
                ok = got == want and isinstance(got, bool) == isinstance(want, bool)
        if ok:
            print(f"ok: {check}")
        else:
            print(f"FAIL: {check}: got {json.dumps(got)}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

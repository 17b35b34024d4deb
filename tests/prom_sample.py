#!/usr/bin/env python3
"""prom_sample.py FILE NAME [LABEL=VALUE...] -- one sample of a /metrics
page in the Prometheus text format, read with the official parser
(Debian's python3-prometheus-client): prints its value (as an integer
when it is one), or <none>.  The labels given must be the sample's
whole label set.

prom_sample.py FILE --families: every family as NAME:TYPE, sorted.
prom_sample.py FILE --sum NAME [LABEL=VALUE...]: the sum of the samples
of NAME whose labels include those given."""
import sys
from prometheus_client.parser import text_string_to_metric_families


def main(path, name, *pairs):
    fams = list(text_string_to_metric_families(open(path).read()))
    if name == '--families':
        print(' '.join(sorted('%s:%s' % (f.name, f.type) for f in fams)))
        return
    total = name == '--sum'
    if total:
        name, pairs = pairs[0], pairs[1:]
    want = dict(kv.split('=', 1) for kv in pairs)
    found, acc = False, 0.0
    for f in fams:
        for s in f.samples:
            if s.name != name:
                continue
            if (total and all(s.labels.get(k) == v for k, v in want.items())) or s.labels == want:
                found, acc = True, acc + s.value
                if not total:
                    break
    if not found:
        print('<none>')
    else:
        print(int(acc) if acc == int(acc) else acc)


if __name__ == '__main__':
    main(*sys.argv[1:])

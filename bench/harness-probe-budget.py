#!/usr/bin/env python3
"""Per run of a bench/harness-probe.sh corpus (CORPUS_DIR/seed-NNN.json): what stopped
`--until-stable`, and for runs stopped by the budget the seconds settling would take by the
probe's own plan (round_plan.seconds_to_settle, if intervals narrow as 1/sqrt(probes)),
per address family.  Usage: python3 bench/harness-probe-budget.py CORPUS_DIR"""
import json,glob,os,sys
# Projection: per run, elapsed, stopped_by, plan; total seconds to settle = elapsed + seconds_to_settle
corpus=sys.argv[1]
rows=[]
for f in sorted(glob.glob(os.path.join(corpus,'seed-???.json'))):
    d=json.load(open(f)); r=d['result']
    fam='IPv6' if ':' in d['parameters']['target'] else 'IPv4'
    p=r.get('round_plan') or {}
    need=p.get('seconds_to_settle')
    total=r['elapsed_seconds']+(need if need is not None else float('nan'))
    rows.append((int(f[-8:-5]),fam,len(r['hops'])-1,r['rounds'],r.get('stopped_by'),r['elapsed_seconds'],p.get('rounds_to_settle'),need,total))
def q(v):
    v=sorted(v); n=len(v)
    return f"min {v[0]:.0f}, median {v[n//2]:.0f}, p90 {v[int(0.9*(n-1))]:.0f}, max {v[-1]:.0f} (n = {n})" if v else "-"
for fam in ('IPv4','IPv6'):
    rs=[r for r in rows if r[1]==fam]
    st={}
    for r in rs: st[r[4]]=st.get(r[4],0)+1
    print(f"{fam}: {len(rs)} runs, stopped by {st}; probe seconds {q([r[5] for r in rs])}")
    b=[r for r in rs if r[4]=='budget']
    tot=[r[8] for r in b if r[8]==r[8]]
    print(f"  budget-stopped: projected total seconds to settle {q(tot)}; within 180 s: {sum(1 for t in tot if t<=180)} of {len(b)}; within 120 s: {sum(1 for t in tot if t<=120)}")
    print("  ", [(r[0], r[2], r[3], round(r[5]), r[6], None if r[7] is None else round(r[7])) for r in b])

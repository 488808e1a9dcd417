#!/usr/bin/env python3
"""The destination rows of a probe scorecard or replay listing that do not hold (per byte and
answer per byte by their class, fixed outside 30 us), by family.  Usage: python3
bench/harness-probe-dest.py CORPUS_DIR CORPUS_DIR/probe-scorecard.md (or a replay's probe-replay.md)"""
import re,json,glob,sys,os
corpus,md=sys.argv[1],sys.argv[2]
dest={}
for f in glob.glob(os.path.join(corpus,'seed-???.json')):
    d=json.load(open(f)); dest[int(f[-8:-5])]=d['result']['hops'][-1]['ttl']
counts={}
for line in open(md):
    m=re.match(r'\| (\d+) \| (\d+) \| (IPv\d) \| (\d+) \| (fixed|per byte|answer per byte) \|',line)
    if not m: continue
    c=[x.strip() for x in line.split('|')[1:-1]]
    seed,routers,fam,hop,what,conf,meas,err,within,_,cls,iv,lab,_f=c
    if dest[int(seed)]!=int(hop): continue
    fail = (within!='yes') if what=='fixed' else (cls!='within')
    if fail:
        k=(what,fam,cls if what!='fixed' else 'outside 30 us'); counts[k]=counts.get(k,0)+1
for k in sorted(counts): print(k,counts[k])

#!/usr/bin/env python3
# Size of the binary crate for issue 30's closing table: production files and lines (before
# the first #[cfg(test)], tests.rs files left out) and the functions over 100 and 150 lines,
# counted from `fn` to its closing brace as crates/wirespeed/tests/layers.rs counts them
# (comments, strings and characters blanked; #[cfg(test)] modules left out).
# Usage: python3 bench/code-metrics.py [crates/wirespeed/src]
import os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else "crates/wirespeed/src"
def blank(s):
    out=[]; i=0; n=len(s)
    def st(i,p): return s.startswith(p,i)
    while i<n:
        wb = i>0 and (s[i-1].isalnum() or s[i-1]=='_')
        if st(i,'//'):
            j=s.find('\n',i); end = n if j<0 else j
        elif st(i,'/*'):
            j=s.find('*/',i+2); end = n if j<0 else j+2
        elif s[i]=='r' and not wb and (st(i+1,'"') or st(i+1,'#')):
            h=0
            while i+1+h<n and s[i+1+h]=='#': h+=1
            o=i+1+h
            if o>=n or s[o]!='"':
                out.append(s[i]); i+=1; continue
            close='"'+'#'*h
            j=s.find(close,o+1); end = n if j<0 else j+len(close)
        elif s[i]=='"':
            j=i+1
            while j<n and s[j]!='"':
                j += 2 if s[j]=='\\' else 1
            end=min(j+1,n)
        elif s[i]=="'" and i+2<n and s[i+2]=="'" and s[i+1]!='\\':
            end=i+3
        elif s[i]=="'" and i+1<n and s[i+1]=='\\':
            end=i+1
            for j in range(i+3,min(n,i+12)):
                if s[j]=="'": end=j+1; break
        else:
            out.append(s[i]); i+=1; continue
        out.append(''.join('\n' if c=='\n' else ' ' for c in s[i:end])); i=end
    return ''.join(out)
def close(code,o):
    d=0
    for k in range(o,len(code)):
        c=code[k]
        if c=='{': d+=1
        elif c=='}':
            d-=1
            if d==0: return k+1
    return len(code)
def funcs(text):
    code=blank(text)
    tr=[]
    for m in re.finditer(re.escape('#[cfg(test)]'),code):
        at=m.start(); rest=code[at+12:].lstrip()
        if rest.startswith('pub(crate) '): rest=rest[11:]
        k=min([x for x in (code.find('{',at+12),code.find(';',at+12)) if x>=0] or [-1])
        if rest.startswith('mod ') and k>=0 and code[k]=='{': tr.append((at,close(code,k)))
    res=[]
    for m in re.finditer('fn ',code):
        at=m.start()
        if at>0 and (code[at-1].isalnum() or code[at-1]=='_'): continue
        if any(a<=at<b for a,b in tr): continue
        nm=re.match(r'\s*(\w*)',code[at+3:]).group(1)
        if not nm: continue
        d=0; o=None
        for k in range(at,len(code)):
            c=code[k]
            if c in '([': d+=1
            elif c in ')]': d-=1
            elif c=='{' and d==0: o=k; break
            elif c==';' and d==0: break
        if o is None: continue
        e=close(code,o)
        first=code[:at].count('\n')+1; last=code[:e-1].count('\n')+1
        res.append((nm,first,last-first+1))
    return res, tr, code
files=0; lines=0; over100=[]; over150=[]; biggest=(0,'')
for dp,dn,fn in os.walk(root):
    for f in fn:
        if not f.endswith('.rs') or f=='tests.rs': continue
        p=os.path.join(dp,f); t=open(p).read()
        fs,tr,code=funcs(t)
        prod = t.split('#[cfg(test)]')[0]
        files+=1; lines+=prod.count('\n')
        biggest=max(biggest,(t.count('\n'),p))
        for nm,a,l in fs:
            if l>100: over100.append((l,os.path.relpath(p,root),nm))
            if l>150: over150.append((l,os.path.relpath(p,root),nm))
code = 0
for dp, dn, fn in os.walk(root):
    for f in fn:
        if f.endswith('.rs') and f != 'tests.rs':
            t = open(os.path.join(dp, f)).read().split('#[cfg(test)]')[0]
            code += sum(1 for l in t.splitlines() if l.strip() and not l.strip().startswith('//'))
print(f"files {files}, production lines {lines} ({code} without blank and // lines), largest {biggest}")
print(f"functions over 100: {len(over100)}; over 150: {len(over150)}")
for x in sorted(over100,reverse=True): print("  ",x)

import csv,sys,collections
f=sys.argv[1]; top=int(sys.argv[2]) if len(sys.argv)>2 else 30
rows=list(csv.reader(open(f)))
hi=[i for i,r in enumerate(rows) if r and r[0]=="Address"][0]
h=rows[hi]; data=[r for r in rows[hi+1:] if len(r)==len(h)]
S=h.index("Warp Stall Sampling (All Samples)")
stalls=[c for c in h if c.startswith("stall_") and "Not Issued" not in c]
tot=collections.Counter(); allsum=0
for i,r in enumerate(data):
    allsum+=int(r[S] or 0)
    for c in stalls: tot[c]+=int(r[h.index(c)] or 0)
print("total samples",allsum, "instructions executed", sum(int(r[h.index("Instructions Executed")] or 0) for r in data))
for c,v in tot.most_common(10): print(f"  {c:28s} {v:8d} {100*v/allsum:5.1f}%")
idx=sorted(range(len(data)),key=lambda i:-int(data[i][S] or 0))[:top]
for i in sorted(idx):
    r=data[i]
    st=sorted(((int(r[h.index(c)] or 0),c) for c in stalls),reverse=True)[:2]
    print(f"{i:5d} {int(r[S]):6d} {r[1].strip()[:60]:60s} {st[0][1][6:]}={st[0][0]} {st[1][1][6:]}={st[1][0]}")

"""The page around the sections: escaping, the inline style and script, the state legend with
its patterns. Nothing here loads anything: no link, no font, no image from elsewhere.

Colour never carries meaning alone: every state has a text label and a pattern (SVG
``<pattern>`` fills, which print), and every mark has a title that says what it is."""

from __future__ import annotations

from html import escape

# the coverage states: (css colour, pattern kind, label people read)
STATES = {
    "read": ("#2f6fb5", "solid", "read by the model"),
    "scanned": ("#7fb77e", "diagonal", "scanned by code"),
    "failed": ("#c0392b", "cross", "failed or not run"),
    "skipped": ("#9b9b9b", "dots", "skipped"),
    "outside": ("#e3d9c6", "horizontal", "outside the time window"),
    "unread": ("#f4f4f4", "none", "not read"),
}

CSS = """
:root{--fg:#1d1d1f;--muted:#5a5a5f;--line:#d0d0d6;--bg:#fff;--accent:#2f6fb5}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
 background:var(--bg);margin:0 auto;max-width:1100px;padding:1rem 1.2rem 3rem}
h1{font-size:1.45rem;margin:.2rem 0 .4rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:1.8rem 0 .5rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
h3{font-size:1rem;margin:1.1rem 0 .3rem}
h2,h3,p,li,summary{overflow-wrap:anywhere}
p{margin:.4rem 0}.muted{color:var(--muted)}.small{font-size:.85rem}
code,pre,.ref{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
pre{background:#f6f6f8;border:1px solid #e6e6ea;padding:.35rem .5rem;margin:.25rem 0 .6rem;
 white-space:pre-wrap;overflow-wrap:anywhere;max-height:14rem;overflow:auto}
.verdict{display:inline-block;padding:.1rem .5rem;border:2px solid;font-weight:600}
.verdict.ok{border-color:#2e7d32;color:#2e7d32}.verdict.partial{border-color:#b3261e;color:#b3261e}
.answer{background:#fafafc;border-left:4px solid var(--accent);padding:.1rem .8rem;
 overflow-wrap:anywhere}.answer ul,.answer ol{padding-left:1.4rem;margin:.3rem 0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;margin:.3rem 0 .8rem}
th,td{border-bottom:1px solid #e6e6ea;padding:.25rem .4rem;text-align:left;vertical-align:top;
 overflow-wrap:anywhere}
th{background:#f3f3f6;font-weight:600;overflow-wrap:normal}td.num,th.num{text-align:right;white-space:nowrap}
.ref{background:#eef3fa;border:1px solid #c9d8ee;border-radius:3px;padding:0 .25rem;
 cursor:pointer;white-space:nowrap}
.ref.copied::after{content:" copied";color:#2e7d32}
.legend{display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin:.4rem 0;font-size:.85rem}
.legend span{display:inline-flex;align-items:center;gap:.3rem}
.legend svg{width:1.6rem;height:.9rem;border:1px solid #888}
.bar{width:100%;height:2.4rem;display:block;border:1px solid #888}
.bar[data-unit=bytes] .seg{stroke:#fff;stroke-width:1px;vector-effect:non-scaling-stroke}
.fileband{width:100%;height:.9rem;display:block}
.lane{display:grid;grid-template-columns:minmax(8rem,16rem) 1fr;gap:.5rem;align-items:center;
 border-bottom:1px dotted #e0e0e6;padding:.15rem 0}
.lane-label{font-size:.8rem;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.strip{width:100%;height:1.5rem;display:block;background:#fafafa}
.strip .mark,.strip .density{fill:#1d1d1f}
.tip{position:fixed;z-index:9;background:#1d1d1f;color:#fff;font-size:.75rem;padding:.15rem .4rem;
 pointer-events:none;white-space:nowrap}
.axis{display:grid;grid-template-columns:minmax(8rem,16rem) 1fr;gap:.5rem;font-size:.75rem;
 color:var(--muted)}
.axis .ticks{position:relative;height:1.2rem}
.axis .ticks span{position:absolute;transform:translateX(-50%);white-space:nowrap}
.axis .ticks span:first-child{transform:none}.axis .ticks span:last-child{transform:translateX(-100%)}
.axis .ticks span.at{top:.3rem}.axis .ticks i{position:absolute;top:0;height:.35rem;border-left:1px solid #888}
.axis .ticks:has(i){height:1.5rem}
.finding{margin:.5rem 0 .9rem}.finding .claim{margin:.1rem 0}
.finding.tight{margin:.1rem 0}
.evline{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.5rem;align-items:start;
 margin:.15rem 0}.evline pre{margin:0}
.tag{display:inline-block;font-size:.75rem;border:1px solid;padding:0 .3rem;margin-right:.3rem}
.tag.unverified{color:#b3261e;border-color:#b3261e}.tag.verified{color:#2e7d32;border-color:#2e7d32}
.tag.inferred{color:#8a5a00;border-color:#8a5a00}.tag.placeholder{color:#555;border-color:#555}
.graph{width:100%;height:auto;display:block;border:1px solid #e0e0e6}
.statement{font-style:italic}.gate ul{margin:.2rem 0;padding-left:1.2rem;color:var(--muted)}
@media (max-width:640px){body{padding:.5rem}.lane,.axis{grid-template-columns:7.5rem 1fr}
 .lane-label{white-space:normal;display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical}
 .evline{grid-template-columns:1fr}.ref{white-space:normal;overflow-wrap:anywhere}}
@media print{
 @page{size:A4;margin:14mm 12mm}
 body{max-width:none;padding:0;font-size:10.5pt}
 *{-webkit-print-color-adjust:exact;print-color-adjust:exact}
 h2{break-after:avoid}tr,.finding,.lane,figure{break-inside:avoid}
 pre{max-height:none;overflow:visible}.ref{border:none;background:none;padding:0}
 .noprint{display:none}
}
"""

# copy a path:line on click; the page is whole without it (scripting off: the text is there)
SCRIPT = """
document.querySelectorAll('.ref').forEach(function(el){
  el.setAttribute('role','button');el.setAttribute('tabindex','0');
  el.title='copy '+el.textContent;
  function copy(){
    var t=el.textContent;
    var done=function(){el.classList.add('copied');setTimeout(function(){el.classList.remove('copied')},1200)};
    if(navigator.clipboard){navigator.clipboard.writeText(t).then(done,function(){})}
  }
  el.addEventListener('click',copy);
  el.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();copy()}});
});
// a density strip: the exact count of the slice under the pointer (scripting off: each shade's range)
var tip=document.createElement('div');tip.className='tip';tip.hidden=true;document.body.appendChild(tip);
document.querySelectorAll('svg.strip[data-bins]').forEach(function(s){
  var bins=s.dataset.bins.split(',').map(Number),n=bins.length,a=Number(s.dataset.from),
      b=Number(s.dataset.to),time=s.dataset.unit==='time',long=b-a>86400;
  s.querySelectorAll('title').forEach(function(t){t.remove()});
  function at(v){return time?new Date(v*1000).toISOString().replace('T',' ').slice(long?5:11,19)
                       :'line '+Math.round(v).toLocaleString('en')}
  s.addEventListener('mousemove',function(e){
    var r=s.getBoundingClientRect(),i=Math.min(n-1,Math.max(0,Math.floor((e.clientX-r.left)/r.width*n)));
    tip.textContent=bins[i].toLocaleString('en')+' line'+(bins[i]===1?'':'s')+', '+at(a+(b-a)*i/n)+' to '+at(a+(b-a)*(i+1)/n);
    tip.hidden=false;var w=tip.offsetWidth,x=e.clientX+12;
    tip.style.left=(x+w>innerWidth?Math.max(0,e.clientX-w-12):x)+'px';tip.style.top=(e.clientY+14)+'px';
  });
  s.addEventListener('mouseleave',function(){tip.hidden=true});
});
"""


def esc(x) -> str:
    return escape("" if x is None else str(x), quote=True)


def ref(path: str, a: int, b: int | None = None) -> str:
    """A path:line that copies on click (plain text with scripting off)."""
    text = f"{path}:{a}" + (f"-{b}" if b and b != a else "")
    return f'<code class="ref">{esc(text)}</code>'


def _pattern(state: str) -> str:
    colour, kind, _ = STATES[state]
    marks = {
        "solid": "",
        "diagonal": '<path d="M0,8 L8,0" stroke="#1d1d1f" stroke-width="1" opacity=".45"/>',
        "cross": ('<path d="M0,0 L8,8 M0,8 L8,0" stroke="#fff" stroke-width="1.4"/>'),
        "dots": '<circle cx="4" cy="4" r="1.4" fill="#1d1d1f" opacity=".6"/>',
        "horizontal": '<path d="M0,4 L8,4" stroke="#1d1d1f" stroke-width="1" opacity=".4"/>',
        "none": "",
    }[kind]
    return (f'<pattern id="pat-{state}" patternUnits="userSpaceOnUse" width="8" height="8">'
            f'<rect width="8" height="8" fill="{colour}"/>{marks}</pattern>')


def pattern_defs() -> str:
    """The patterns, once per page, in a zero-size SVG other SVGs refer to."""
    return ('<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>'
            + "".join(_pattern(s) for s in STATES) + "</defs></svg>")


def legend(states: list[str], counts: dict[str, str] | None = None) -> str:
    out = []
    for s in states:
        label = STATES[s][2] + (f": {counts[s]}" if counts and s in counts else "")
        out.append(f'<span data-state="{s}"><svg viewBox="0 0 16 9" aria-hidden="true">'
                   f'<rect width="16" height="9" fill="url(#pat-{s})"/></svg>{esc(label)}</span>')
    return f'<div class="legend">{"".join(out)}</div>'


def section(title: str, body: str, sid: str = "") -> str:
    attr = f' id="{esc(sid)}"' if sid else ""
    return f"<section{attr}><h2>{esc(title)}</h2>{body}</section>"


def table(head: list[str], rows: list[list[str]], num: set[int] = frozenset(),
          cls: str = "") -> str:
    """Cells are HTML already (escape them first); ``num`` are right-aligned columns."""
    th = "".join(f'<th{" class=num" if i in num else ""} scope="col">{h}</th>'
                 for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(f'<td{" class=num" if i in num else ""}>{c}</td>'
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return (f'<div class="scroll"><table class="{cls}"><thead><tr>{th}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            f"{pattern_defs()}{body}<script>{SCRIPT}</script></body></html>\n")

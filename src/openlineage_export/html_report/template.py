"""The page's Jinja2 template, style sheet and script, inlined into every report.

Autoescaping is on: every string from the trail is text, never markup. The only markup passed
through is the SVG Graphviz wrote from escaped labels. No external resource is referenced, and
the page's Content-Security-Policy forbids loading any (the script is allowed by its hash).
"""

# ruff: noqa: E501  (template lines follow the HTML, not the Python, line length)

from __future__ import annotations

STYLE = """
:root{--ok:#2e7d4f;--fail:#c0392b;--abort:#b7791f;--run:#2b6cb0;--refused:#7b3fa0;
--muted:#5f6b7a;--line:#dde3ec;--bg:#f7f9fc;--ink:#1d2733}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:var(--ink);background:var(--bg)}
header{background:#1f3354;color:#fff;padding:18px 28px 14px}
header h1{margin:0;font-size:20px;font-weight:600;overflow-wrap:anywhere}
header p{margin:4px 0 0;color:#cfd9ea}
nav{margin-top:8px}nav a{color:#fff;margin-right:16px;font-size:13px}
main{padding:8px 28px 40px;max-width:1500px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 18px;
margin:16px 0}
h2{font-size:17px;margin:0 0 10px}h3{font-size:15px;margin:0;overflow-wrap:anywhere}
.tiles{display:flex;flex-wrap:wrap;gap:10px;margin:16px 0 0}
.tile{background:#fff;border:1px solid var(--line);border-left:5px solid var(--muted);
border-radius:6px;padding:8px 14px;min-width:128px}
.tile b{display:block;font-size:22px}.tile span{color:var(--muted);font-size:12px}
.tile.ok{border-left-color:var(--ok)}.tile.fail{border-left-color:var(--fail)}
.tile.warn{border-left-color:var(--abort)}.tile.info{border-left-color:var(--run)}
.tile.refused{border-left-color:var(--refused)}
.note{background:#fff8e6;border:1px solid #f0d48a;border-radius:6px;padding:8px 12px}
.note.bad{background:#fdecea;border-color:#f1b0a8}
.muted{color:var(--muted)}
.legend{display:flex;flex-wrap:wrap;gap:18px;font-size:12px;color:var(--muted);margin-bottom:8px}
.legend i{display:inline-block;width:22px;height:12px;vertical-align:middle;margin-right:5px;
border-radius:3px}
.drawing{overflow:auto;border:1px solid var(--line);border-radius:6px;max-height:80vh;padding:6px;
background:linear-gradient(to right,#fff 40%,#fff0) left/36px 100% no-repeat local,
linear-gradient(to left,#fff 40%,#fff0) right/36px 100% no-repeat local,
radial-gradient(farthest-side at 0 50%,#0003,#0000) left/12px 100% no-repeat scroll,
radial-gradient(farthest-side at 100% 50%,#0003,#0000) right/12px 100% no-repeat scroll #fff}
.drawing svg{height:auto;display:block}.drawing.whole svg{max-width:100%}
.drawing svg text{font-family:Helvetica,Arial,sans-serif}
.picker{display:flex;flex-wrap:wrap;gap:6px;margin:14px 0 10px}
.picker a{border:1px solid var(--line);border-radius:14px;padding:2px 11px;font-size:13px;
color:var(--ink);background:#fff;text-decoration:none;overflow-wrap:anywhere}
.picker a[aria-selected=true]{background:#1f3354;border-color:#1f3354;color:#fff}
.panel{margin:0 0 12px}.panel .ptitle{margin:4px 0 6px}
.panel .more{display:none}.panel.wider .more{display:inline}
button{font:inherit;font-size:12px;padding:3px 10px;border:1px solid var(--line);border-radius:4px;
background:#fff;cursor:pointer}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top;
overflow-wrap:anywhere}
.wide{overflow-x:auto}
th{font-size:12px;color:var(--muted);font-weight:600;overflow-wrap:normal}
td.n,td.t,td.job,th.n{white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
code,.id{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px;
overflow-wrap:anywhere}
.id{white-space:nowrap;overflow-wrap:normal}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;
color:#fff;background:var(--muted);white-space:nowrap}
.s-completed{background:var(--ok)}.s-failed{background:var(--fail)}
.s-aborted{background:var(--abort)}.s-running{background:var(--run)}
.x-failed{background:var(--refused)}.x-unchanged{background:#718096}
.x-interrupted{background:var(--abort)}.x-built,.x-sent{background:#3c5a8a}
.pipeline{border-top:1px solid var(--line);padding:12px 0 4px}
.pipeline:first-of-type{border-top:0}
.ptitle{display:flex;flex-wrap:wrap;align-items:baseline;gap:10px}
.ns{color:var(--muted);font-size:12px}
.counts span{margin-right:10px;font-size:13px}
.chart{margin:8px 0 4px}.chart svg{display:block;max-width:100%}
.chart text{font-size:9px;fill:var(--muted);text-anchor:middle}
tr.total td{font-weight:600;border-top:2px solid var(--line)}
.axis{display:flex;justify-content:space-between;gap:8px;font-size:11px;color:var(--muted);
white-space:nowrap;max-width:100%}
details.run{border:1px solid var(--line);border-left:5px solid var(--muted);border-radius:5px;
margin:5px 0;background:#fff}
details.run.s-completed{border-left-color:var(--ok);background:#fff}
details.run.s-failed{border-left-color:var(--fail);background:#fff}
details.run.s-aborted{border-left-color:var(--abort);background:#fff}
details.run.s-running{border-left-color:var(--run);background:#fff}
details.run>summary{cursor:pointer;padding:5px 10px;display:flex;flex-wrap:wrap;gap:4px 12px;
align-items:baseline}
details.run .err{color:var(--fail)}details.run .refusal{color:var(--refused)}
#refused .err{color:var(--refused)}
details.run table{margin:2px 0 8px;font-size:13px}
details.run td:first-child{padding-left:22px}
.retry{color:var(--abort);font-weight:600;font-size:12px}
.tools{display:flex;gap:14px;align-items:center;margin:4px 0 8px;font-size:13px}
.tools{flex-wrap:wrap}
.tools input[type=search]{font:inherit;padding:3px 8px;width:320px;max-width:100%;
border:1px solid var(--line);border-radius:4px}
.hidden{display:none}
footer{color:var(--muted);font-size:12px;padding:0 28px 30px}
"""

SCRIPT = """
(function(){
  var fit=document.getElementById('fit'),graphs=document.querySelectorAll('.drawing');
  if(fit){fit.addEventListener('click',function(){
    var whole=fit.textContent==='Whole drawings';
    graphs.forEach(function(g){g.classList.toggle('whole',whole);});
    fit.textContent=whole?'Readable size':'Whole drawings';wider();});}
  var panels=document.querySelectorAll('.panel'),tabs=document.querySelectorAll('#picker a');
  function wider(){
    panels.forEach(function(d){var g=d.querySelector('.drawing');
      d.classList.toggle('wider',g.scrollWidth>g.clientWidth+1);});
  }
  function show(id){
    panels.forEach(function(d){d.classList.toggle('hidden',d.id!==id);});
    tabs.forEach(function(t){t.setAttribute('aria-selected',
      String(t.getAttribute('href')==='#'+id));});
    wider();
  }
  window.addEventListener('resize',wider);
  if(panels.length){
    var wanted=location.hash.slice(1);
    show(document.getElementById(wanted)&&/^lineage-/.test(wanted)?wanted:panels[0].id);
    document.getElementById('graph-section').addEventListener('click',function(e){
      var a=e.target.closest('a');if(!a){return;}
      var h=a.getAttribute('href')||a.getAttributeNS('http://www.w3.org/1999/xlink','href')||'';
      if(!/^#lineage-/.test(h)){return;}
      e.preventDefault();show(h.slice(1));
      if(a.closest('svg')){document.getElementById('picker').scrollIntoView();}
    });
  }
  var q=document.getElementById('find'),p=document.getElementById('problems');
  function filter(){
    var text=(q&&q.value||'').toLowerCase(),only=p&&p.checked;
    document.querySelectorAll('details.run').forEach(function(r){
      var show=(!text||r.textContent.toLowerCase().indexOf(text)>=0)&&
        (!only||r.classList.contains('problem'));
      r.classList.toggle('hidden',!show);});
  }
  if(q){q.addEventListener('input',filter);}
  if(p){p.addEventListener('change',filter);}
})();
"""

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{{ csp }}">
<title>OpenLineage export report: {{ namespace }}</title>
<style>{{ style }}</style>
</head>
<body>
<header>
<h1>OpenLineage export report: {{ namespace }}</h1>
<p id="headline">{{ headline }}</p>
<nav><a href="#graph-section">Lineage graph</a><a href="#left-out">Not exported</a>
<a href="#history">Run history</a><a href="#delivery">Delivery by pipeline</a></nav>
</header>
<main>
<div class="tiles" id="tiles">
{%- for tile in tiles %}
<div class="tile {{ tile.kind }}"><b>{{ tile.value }}</b><span>{{ tile.label }}</span></div>
{%- endfor %}
</div>

<section id="graph-section">
<h2>Lineage graph</h2>
<p class="muted">As the lineage server will draw it, one pipeline job at a time: data flows left
to right, from the datasets the pipeline reads to its final outputs, through its stage jobs
(boxes); datasets are cylinders. Names are exactly the events'; the job namespace
<code>{{ namespace }}</code> is shown once, here, not on every job.</p>
<div class="legend">
<span><i style="background:#e8effa;border:1px solid #4a6fa5"></i>stage job</span>
<span><i style="background:#fdf6e3;border:1px solid #b08d3c"></i>dataset</span>
<span><i style="background:#e3f4f1;border:2px solid #2c7a6b"></i>dataset shared with another pipeline</span>
{%- if show_refused %}
<span id="legend-refused"><i style="background:#f3ebf8;border:1px dashed {{ refused_colour }}"></i>only in runs refused by the server: not on the server</span>
{%- endif %}
{%- if panels %} <button id="fit" type="button" title="A drawing wider than the page scrolls sideways in its box; this shrinks it to fit">Whole drawings</button>{% endif %}
</div>
{%- if graph_cut %}
<p class="note">{{ graph_cut }}</p>
{%- endif %}
{%- if panels %}
<nav class="picker" id="picker" aria-label="pipeline drawings">
{%- for p in panels %}<a href="#{{ p.anchor }}">{{ jobname(p.job) }}</a>{% endfor %}</nav>
{%- for p in panels %}
<div class="panel" id="{{ p.anchor }}">
<div class="ptitle"><h3>{{ jobname(p.job) }}</h3><span class="muted">{{ p.summary }}</span>
<span class="more muted">wider than the page: scroll it sideways, or press “Whole drawings”</span></div>
<div class="drawing">{{ p.svg }}</div>
</div>
{%- endfor %}
{%- if shared %}
<h3 id="overview-title">How pipelines connect: the {{ shared }} dataset{{ "s" if shared != 1 }} more than one of them reads or writes</h3>
<p class="muted">Each pipeline job as one box; click one to see its drawing above.</p>
<div class="drawing" id="overview">{{ drawing.overview }}</div>
{%- if alone %}
<p class="muted" id="alone">The other {{ alone }} pipeline job{{ "s share" if alone != 1 else " shares" }} no dataset with another.</p>
{%- endif %}
{%- else %}
<p class="muted" id="alone">No dataset is shared between pipelines: each one's lineage stands alone.</p>
{%- endif %}
{%- else %}
<p class="note" id="graph-note">{{ drawing.note }}</p>
{%- endif %}
<details id="graph-list"{% if not panels %} open{% endif %}>
<summary>Jobs and datasets as a list</summary>
<div class="wide"><table>
<tr><th>pipeline job</th><th>stage job</th><th>reads</th><th>writes</th></tr>
{%- for row in job_rows %}
<tr><td>{{ jobname(row.pipeline) }}</td><td>{{ jobname(row.job) }}</td>
<td>{% for d in row.reads %}<div><span class="ns">{{ d[0] }}</span> {{ d[1] }}</div>{% endfor %}</td>
<td>{% for d in row.writes %}<div><span class="ns">{{ d[0] }}</span> {{ d[1] }}</div>{% endfor %}</td></tr>
{%- endfor %}
</table></div>
</details>
</section>

<section id="left-out">
<h2>Not exported, and why</h2>
{%- if not (never_run or bad_count or refused_count or outage or cancelled or not_tried) %}
<p>Everything on the trail {{ "would be sent" if dry_run else "was exported" }}.</p>
{%- endif %}
{%- if outage %}<p class="note bad" id="outage">Stopped: {{ outage }}</p>{% endif %}
{%- if cancelled %}<p class="note" id="cancelled">Interrupted: what was accepted is kept; run
the export again to finish.</p>{% endif %}
{%- if not_tried %}<p class="note">{{ not_tried|num }} run(s) on the trail were not tried.</p>{% endif %}
{%- if never_run %}
<h3>Pipelines that never ran ({{ never_run|length }})</h3>
<p class="muted">OpenLineage is a log of runs: a pipeline without a run has nothing to send.</p>
<ul id="never-run">{% for p in never_run %}<li><code>{{ p }}</code></li>{% endfor %}</ul>
{%- endif %}
{%- if bad_count %}
<h3>Bad entries on the audit trail ({{ bad_count|num }})</h3>
<p class="muted">These lines could not be read; every good run around them is exported.</p>
<div class="wide"><table id="bad-entries">
<tr><th>file</th><th class="n">line</th><th>what is wrong</th></tr>
{%- for b in bad %}
<tr><td><code>{{ b.file }}</code></td><td class="n">{{ b.line }}</td><td>{{ b.reason }}</td></tr>
{%- endfor %}
</table></div>
{%- if bad_count > bad|length %}<p class="muted">… and {{ (bad_count - bad|length)|num }} more.</p>{% endif %}
{%- endif %}
{%- if refused_count %}
<h3>Runs refused by the server ({{ refused_count|num }})</h3>
<p class="muted">The editor ran these; the lineage server did not take their events.</p>
<div class="wide"><table id="refused">
<tr><th>pipeline job</th><th>run id</th><th>trace id</th><th>the server's reason</th></tr>
{%- for r in refused %}
<tr><td>{{ jobname(r.pipeline) }}</td><td class="id">{{ r.run_id }}</td><td class="id">{{ r.trace_id }}</td>
<td class="err">{{ r.reason }}</td></tr>
{%- endfor %}
</table></div>
{%- if refused_count > refused|length %}<p class="muted">… and {{ (refused_count - refused|length)|num }} more.</p>{% endif %}
{%- endif %}
</section>

<section id="history">
<h2>Run history</h2>
<p class="muted">Per pipeline job: runs per {{ bucket }} (UTC) coloured by how they ended in
the editor, each bar with its count, then the {{ recent_limit }} most recent runs in full with
their stage runs (retried stages show each attempt), and the latest earlier failures. Click a
run to see its stage runs. All times are UTC.</p>
{%- if kept_cut %}
<p class="note" id="kept-cut">{{ kept_cut }}</p>
{%- endif %}
<div class="legend" id="history-legend"><span><i class="s-completed"></i>completed</span>
<span><i class="s-failed"></i>failed in the editor</span><span><i class="s-aborted"></i>aborted in the editor</span>
<span><i class="s-running"></i>still running</span>
{%- if refused_count %}<span><i class="x-failed"></i>refused by the server</span>{% endif %}</div>
<div class="tools"><input type="search" id="find" placeholder="Find a run: trace id, run id, stage, error">
<label><input type="checkbox" id="problems"> only runs that failed or were aborted in the editor{{ ", or refused by the server" if refused_count }}</label></div>
{%- for p in pipelines %}
<div class="pipeline" id="pipeline-{{ loop.index }}">
<div class="ptitle"><h3>{{ jobname(p.job) }}</h3>
<span class="counts">{{ p.runs_text }}:
{%- for state, n in p.states %} <span><span class="badge s-{{ state }}">{{ n|num }} {{ state }}</span></span>{% endfor %}</span></div>
<div class="chart"><svg width="{{ p.chart.width }}" height="{{ p.chart.height }}" role="img"
aria-label="runs of {{ p.job[1] }} per {{ bucket }}">
{%- for bar in p.chart.bars %}<g class="bar"><title>{{ bar.title }}</title>
{%- for r in bar.rects %}<rect x="{{ bar.x }}" y="{{ r.y }}" width="{{ bar.w }}" height="{{ r.h }}" fill="{{ r.fill }}"/>{% endfor %}
{%- if bar.count %}<text x="{{ bar.cx }}" y="{{ bar.cy }}">{{ bar.count }}</text>{% endif %}</g>
{%- endfor %}</svg>
<div class="axis" style="width:{{ p.chart.width }}px"><span>{{ p.chart.first }}</span><span>{{ p.chart.last }}</span></div></div>
{%- for run in p.recent %}{{ run_block(run) }}{% endfor %}
{%- if p.hidden %}<p class="muted">{{ p.hidden|num }} earlier run(s) are counted in the chart above.</p>{% endif %}
{%- if p.failures %}<p class="muted">Latest earlier failures:</p>
{%- for run in p.failures %}{{ run_block(run) }}{% endfor %}{% endif %}
</div>
{%- endfor %}
{%- if pipelines_cut %}<p class="note" id="pipelines-cut">{{ pipelines_cut }}</p>{% endif %}
</section>

<section id="delivery">
<h2>Delivery by pipeline</h2>
{%- if dry_run %}<p class="muted">Dry run: every run was built, nothing was sent.</p>{% endif %}
<div class="wide"><table>
<tr><th>pipeline job</th><th class="n">runs</th>{% for s in export_states %}<th class="n">{{ export_labels[s] }}</th>{% endfor %}<th class="n">{{ "events built" if dry_run else "events sent" }}</th></tr>
{%- for p in pipelines %}
<tr><td>{{ jobname(p.job) }}</td><td class="n">{{ p.runs|num }}</td>
{%- for s in export_states %}<td class="n">{{ p.exports.get(s, 0)|num }}</td>{% endfor %}<td class="n">{{ (p.events if dry_run else p.events_sent)|num }}</td></tr>
{%- endfor %}
<tr class="total"><td>all pipelines</td><td class="n">{{ runs|num }}</td>
{%- for s in export_states %}<td class="n">{{ exports[s]|num }}</td>{% endfor %}<td class="n">{{ events_total|num }}</td></tr>
</table></div>
{%- if not dry_run %}<p class="muted">Events sent: those of the runs sent by this export{% if events_partial %}, and {{ events_partial|num }} of runs refused part way (the server keeps what it accepted){% endif %}; runs unchanged were sent before.</p>{% endif %}
</section>
</main>
<footer>Written by {{ program }} {{ version }}. All times are UTC. The report holds no
time of its own: the same trail gives the same file.</footer>
<script>{{ script }}</script>
</body>
</html>
"""

JOBNAME = """{%- macro jobname(key) -%}
{%- if key[0] != namespace %}<span class="ns">{{ key[0] }}</span> {% endif %}{{ key[1] }}
{%- endmacro -%}
"""

RUN = """{%- macro run_block(run) -%}
<details class="run s-{{ run.state }}{% if run.problem %} problem{% endif %}"{% if run.problem %} open{% endif %}>
<summary><span class="badge s-{{ run.state }}">{{ run.state }}</span>
<span>{{ run.started }} UTC</span><span class="muted">{{ run.duration }}</span>
<span>run id <span class="id">{{ run.run_id }}</span></span>
{%- if run.trace_id != run.run_id %}<span>trace id <span class="id">{{ run.trace_id }}</span></span>{% endif %}
{%- for job, n in run.retried %}<span class="retry">{{ job }}: {{ n }} attempts</span>{% endfor %}
{%- if run.export_state not in ("built", "sent") %}<span class="badge x-{{ run.export_state }}">{{ export_labels[run.export_state] }}</span>{% endif %}
{%- if run.export_reason %}<span class="refusal">{{ run.export_reason }}</span>{% endif %}
{%- if run.error %}<span class="err">{{ run.error }}</span>{% endif %}
</summary>
<div class="wide"><table>
<tr><th>stage job</th><th class="n">attempt</th><th>state</th><th>started (UTC)</th><th>took</th><th class="n">reads</th><th class="n">writes</th><th>error</th></tr>
{%- for s in run.stages %}
<tr><td class="job">{{ jobname(s.job) }}</td><td class="n">{% if s.retry %}<span class="retry">{{ s.attempt }}</span>{% else %}{{ s.attempt }}{% endif %}</td>
<td><span class="badge s-{{ s.state }}">{{ s.state }}</span></td><td class="t">{{ s.started }}</td><td class="t">{{ s.duration }}</td>
<td class="n">{{ s.inputs }}</td><td class="n">{{ s.outputs }}</td><td class="err">{{ s.error or "" }}</td></tr>
{%- else %}
<tr><td colspan="8" class="muted">no stage ran</td></tr>
{%- endfor %}
</table></div>
</details>
{%- endmacro -%}
"""

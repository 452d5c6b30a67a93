"""The page's Jinja2 template, style sheet and script, inlined into every report.

Autoescaping is on: every string from the trail is text, never markup. The only markup passed
through is the SVG Graphviz wrote from escaped labels. No external resource is referenced, and
the page's Content-Security-Policy forbids loading any (the script is allowed by its hash).
"""

# ruff: noqa: E501  (template lines follow the HTML, not the Python, line length)

from __future__ import annotations

STYLE = """
:root{--ok:#2e7d4f;--fail:#c0392b;--abort:#b7791f;--run:#2b6cb0;--muted:#5f6b7a;
--line:#dde3ec;--bg:#f7f9fc;--ink:#1d2733}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:var(--ink);background:var(--bg)}
header{background:#1f3354;color:#fff;padding:18px 28px 14px}
header h1{margin:0;font-size:20px;font-weight:600}
header p{margin:4px 0 0;color:#cfd9ea}
nav{margin-top:8px}nav a{color:#fff;margin-right:16px;font-size:13px}
main{padding:8px 28px 40px;max-width:1500px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 18px;
margin:16px 0}
h2{font-size:17px;margin:0 0 10px}h3{font-size:15px;margin:0}
.tiles{display:flex;flex-wrap:wrap;gap:10px;margin:16px 0 0}
.tile{background:#fff;border:1px solid var(--line);border-left:5px solid var(--muted);
border-radius:6px;padding:8px 14px;min-width:128px}
.tile b{display:block;font-size:22px}.tile span{color:var(--muted);font-size:12px}
.tile.ok{border-left-color:var(--ok)}.tile.fail{border-left-color:var(--fail)}
.tile.warn{border-left-color:var(--abort)}.tile.info{border-left-color:var(--run)}
.note{background:#fff8e6;border:1px solid #f0d48a;border-radius:6px;padding:8px 12px}
.note.bad{background:#fdecea;border-color:#f1b0a8}
.muted{color:var(--muted)}
.legend{display:flex;flex-wrap:wrap;gap:18px;font-size:12px;color:var(--muted);margin-bottom:8px}
.legend i{display:inline-block;width:22px;height:12px;vertical-align:middle;margin-right:5px;
border-radius:3px}
.graph{overflow:auto;border:1px solid var(--line);border-radius:6px;background:#fff;
max-height:80vh;padding:6px}
.graph.fit svg{max-width:100%;height:auto}
.graph svg text{font-family:Helvetica,Arial,sans-serif}
button{font:inherit;font-size:12px;padding:3px 10px;border:1px solid var(--line);border-radius:4px;
background:#fff;cursor:pointer}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
code,.id{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px;
overflow-wrap:anywhere}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;
color:#fff;background:var(--muted);white-space:nowrap}
.s-completed{background:var(--ok)}.s-failed{background:var(--fail)}
.s-aborted{background:var(--abort)}.s-running{background:var(--run)}
.x-failed{background:var(--fail)}.x-unchanged{background:#718096}
.x-interrupted{background:var(--abort)}.x-built,.x-sent{background:#3c5a8a}
.pipeline{border-top:1px solid var(--line);padding:12px 0 4px}
.pipeline:first-of-type{border-top:0}
.ptitle{display:flex;flex-wrap:wrap;align-items:baseline;gap:10px}
.ns{color:var(--muted);font-size:12px}
.counts span{margin-right:10px;font-size:13px}
.chart{margin:8px 0 4px}.chart svg{display:block}
.axis{display:flex;justify-content:space-between;gap:8px;font-size:11px;color:var(--muted);
white-space:nowrap}
details.run{border:1px solid var(--line);border-left:5px solid var(--muted);border-radius:5px;
margin:5px 0;background:#fff}
details.run.s-completed{border-left-color:var(--ok);background:#fff}
details.run.s-failed{border-left-color:var(--fail);background:#fff}
details.run.s-aborted{border-left-color:var(--abort);background:#fff}
details.run.s-running{border-left-color:var(--run);background:#fff}
details.run>summary{cursor:pointer;padding:5px 10px;display:flex;flex-wrap:wrap;gap:4px 12px;
align-items:baseline}
details.run .err{color:var(--fail)}
details.run table{margin:2px 0 8px;font-size:13px}
details.run td:first-child{padding-left:22px}
td.t{white-space:nowrap}td.job{white-space:nowrap}
.retry{color:var(--abort);font-weight:600;font-size:12px}
.tools{display:flex;gap:14px;align-items:center;margin:4px 0 8px;font-size:13px}
.tools input[type=search]{font:inherit;padding:3px 8px;width:320px;border:1px solid var(--line);
border-radius:4px}
.hidden{display:none}
footer{color:var(--muted);font-size:12px;padding:0 28px 30px}
"""

SCRIPT = """
(function(){
  var fit=document.getElementById('fit');
  if(fit){fit.addEventListener('click',function(){
    var g=document.getElementById('graph');g.classList.toggle('fit');
    fit.textContent=g.classList.contains('fit')?'Actual size':'Fit to width';});}
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
<p class="muted">As the lineage server will draw it: each pipeline job is a box holding its stage
jobs; datasets are cylinders; an arrow into a job is a read, out of a job a write. Names are
exactly the events' (namespace above, name below).</p>
<div class="legend">
<span><i style="background:#f5f7fb;border:1px solid #9aa9c4"></i>pipeline job</span>
<span><i style="background:#e8effa;border:1px solid #4a6fa5"></i>stage job</span>
<span><i style="background:#fdf6e3;border:1px solid #b08d3c"></i>dataset</span>
<span><i style="background:#fbeaea;border:1px dashed #c0392b"></i>only in refused runs: not on the server</span>
{%- if drawing.svg %} <button id="fit" type="button">Actual size</button>{% endif %}
</div>
{%- if graph_cut %}
<p class="note">{{ graph_cut }}</p>
{%- endif %}
{%- if drawing.svg %}
<div class="graph fit" id="graph">{{ drawing.svg }}</div>
{%- else %}
<p class="note" id="graph-note">{{ drawing.note }}</p>
{%- endif %}
<details id="graph-list"{% if not drawing.svg %} open{% endif %}>
<summary>Jobs and datasets as a list</summary>
<table>
<tr><th>pipeline job</th><th>stage job</th><th>reads</th><th>writes</th></tr>
{%- for row in job_rows %}
<tr><td><span class="ns">{{ row.pipeline[0] }}</span><br>{{ row.pipeline[1] }}</td>
<td><span class="ns">{{ row.job[0] }}</span><br>{{ row.job[1] }}</td>
<td>{% for d in row.reads %}<div><span class="ns">{{ d[0] }}</span> {{ d[1] }}</div>{% endfor %}</td>
<td>{% for d in row.writes %}<div><span class="ns">{{ d[0] }}</span> {{ d[1] }}</div>{% endfor %}</td></tr>
{%- endfor %}
</table>
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
<table id="bad-entries">
<tr><th>file</th><th class="n">line</th><th>what is wrong</th></tr>
{%- for b in bad %}
<tr><td><code>{{ b.file }}</code></td><td class="n">{{ b.line }}</td><td>{{ b.reason }}</td></tr>
{%- endfor %}
</table>
{%- if bad_count > bad|length %}<p class="muted">… and {{ (bad_count - bad|length)|num }} more.</p>{% endif %}
{%- endif %}
{%- if refused_count %}
<h3>Runs the server refused ({{ refused_count|num }})</h3>
<table id="refused">
<tr><th>pipeline job</th><th>run id</th><th>trace id</th><th>the server's reason</th></tr>
{%- for r in refused %}
<tr><td>{{ r.pipeline[1] }}</td><td class="id">{{ r.run_id }}</td><td class="id">{{ r.trace_id }}</td>
<td class="err">{{ r.reason }}</td></tr>
{%- endfor %}
</table>
{%- if refused_count > refused|length %}<p class="muted">… and {{ (refused_count - refused|length)|num }} more.</p>{% endif %}
{%- endif %}
</section>

<section id="history">
<h2>Run history</h2>
<p class="muted">Per pipeline job: runs per {{ bucket }} (UTC) coloured by state, then the
{{ recent_limit }} most recent runs in full with their stage runs (retried stages show each
attempt), and the latest earlier failures. Click a run to see its stage runs.</p>
<div class="legend"><span><i class="s-completed"></i>completed</span>
<span><i class="s-failed"></i>failed</span><span><i class="s-aborted"></i>aborted</span>
<span><i class="s-running"></i>running</span></div>
<div class="tools"><input type="search" id="find" placeholder="Find a run: trace id, run id, stage, error">
<label><input type="checkbox" id="problems"> only failed, aborted or refused</label></div>
{%- for p in pipelines %}
<div class="pipeline" id="pipeline-{{ loop.index }}">
<div class="ptitle"><h3><span class="ns">{{ p.job[0] }}</span> {{ p.job[1] }}</h3>
<span class="counts">{{ p.runs_text }}:
{%- for state, n in p.states %} <span><span class="badge s-{{ state }}">{{ n|num }} {{ state }}</span></span>{% endfor %}</span></div>
<div class="chart"><svg width="{{ p.chart.width }}" height="{{ p.chart.height }}" role="img"
aria-label="runs of {{ p.job[1] }} per {{ bucket }}">
{%- for bar in p.chart.bars %}<g><title>{{ bar.title }}</title>
{%- for r in bar.rects %}<rect x="{{ bar.x }}" y="{{ r.y }}" width="{{ bar.w }}" height="{{ r.h }}" fill="{{ r.fill }}"/>{% endfor %}</g>
{%- endfor %}</svg>
<div class="axis" style="width:{{ p.chart.width }}px"><span>{{ p.chart.first }}</span><span>{{ p.chart.last }}</span></div></div>
{%- for run in p.recent %}{{ run_block(run) }}{% endfor %}
{%- if p.hidden %}<p class="muted">{{ p.hidden|num }} earlier run(s) are counted in the chart above.</p>{% endif %}
{%- if p.failures %}<p class="muted">Latest earlier failures:</p>
{%- for run in p.failures %}{{ run_block(run) }}{% endfor %}{% endif %}
</div>
{%- endfor %}
</section>

<section id="delivery">
<h2>Delivery by pipeline</h2>
{%- if dry_run %}<p class="muted">Dry run: every run was built, nothing was sent.</p>{% endif %}
<table>
<tr><th>pipeline job</th><th class="n">runs</th>{% for s in export_states %}<th class="n">{{ export_labels[s] }}</th>{% endfor %}<th class="n">events</th></tr>
{%- for p in pipelines %}
<tr><td><span class="ns">{{ p.job[0] }}</span> {{ p.job[1] }}</td><td class="n">{{ p.runs|num }}</td>
{%- for s in export_states %}<td class="n">{{ p.exports.get(s, 0)|num }}</td>{% endfor %}<td class="n">{{ p.events|num }}</td></tr>
{%- endfor %}
</table>
</section>
</main>
<footer>Written by openlineage-export {{ version }}. Times are the trail's own; the chart's days
are UTC days. The report holds no time of its own: the same trail gives the same file.</footer>
<script>{{ script }}</script>
</body>
</html>
"""

RUN = """{%- macro run_block(run) -%}
<details class="run s-{{ run.state }}{% if run.problem %} problem{% endif %}"{% if run.problem %} open{% endif %}>
<summary><span class="badge s-{{ run.state }}">{{ run.state }}</span>
<span>{{ run.started }}</span><span class="muted">{{ run.duration }}</span>
<span>run id <span class="id">{{ run.run_id }}</span></span>
{%- if run.trace_id != run.run_id %}<span>trace id <span class="id">{{ run.trace_id }}</span></span>{% endif %}
{%- for job, n in run.retried %}<span class="retry">{{ job }}: {{ n }} attempts</span>{% endfor %}
{%- if run.export_state not in ("built", "sent") %}<span class="badge x-{{ run.export_state }}">{{ export_labels[run.export_state] }}</span>{% endif %}
{%- if run.export_reason %}<span class="err">{{ run.export_reason }}</span>{% endif %}
{%- if run.error %}<span class="err">{{ run.error }}</span>{% endif %}
</summary>
<table>
<tr><th>stage job</th><th class="n">attempt</th><th>state</th><th>started</th><th>took</th><th class="n">reads</th><th class="n">writes</th><th>error</th></tr>
{%- for s in run.stages %}
<tr><td class="job">{{ s.job[1] }}</td><td class="n">{% if s.retry %}<span class="retry">{{ s.attempt }}</span>{% else %}{{ s.attempt }}{% endif %}</td>
<td><span class="badge s-{{ s.state }}">{{ s.state }}</span></td><td class="t">{{ s.started }}</td><td class="t">{{ s.duration }}</td>
<td class="n">{{ s.inputs }}</td><td class="n">{{ s.outputs }}</td><td class="err">{{ s.error or "" }}</td></tr>
{%- else %}
<tr><td colspan="8" class="muted">no stage ran</td></tr>
{%- endfor %}
</table>
</details>
{%- endmacro -%}
"""

//! report.html: one self-contained page (inline CSS, SVG charts and a few lines of script for
//! hover values); opens offline in any browser.

use super::chart::{esc, svg};
use super::scenario_notes::notes;
use super::section::Place;
use super::sections_at;
use super::{summary_rows, ScenarioView};
use crate::results::record::Results;
use std::fmt::Write;

const STYLE: &str = "
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1600px;padding:0 16px;color:#222}
h1{font-size:24px}h2{font-size:20px;margin-top:36px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;vertical-align:top}
th{background:#f4f4f4;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
.banner{background:#fff3cd;border:1px solid #e0c36c;padding:8px 12px;margin:12px 0}
.notes{font-size:13px;color:#444}.grid{display:flex;flex-wrap:wrap;gap:12px}
.chart{border:1px solid #eee;background:#fff;width:calc(50% - 8px);min-width:520px;height:auto}
.pt{r:4px}.pt:hover{r:6px}tr.broken td{background:#fde2e2}
#tip{position:fixed;pointer-events:none;white-space:pre;background:#222;color:#fff;font-size:12px;padding:3px 6px;border-radius:3px;display:none}
pre{background:#f7f7f7;padding:8px;font-size:12px;white-space:pre-wrap}
";

/// Hover values, and a self-check the browser test reads: charts drawn, script errors seen.
const SCRIPT: &str = r#"
window.iobErrors=[];window.addEventListener('error',function(e){window.iobErrors.push(String(e.message))});
document.addEventListener('DOMContentLoaded',function(){
  var tip=document.getElementById('tip');
  function pairs(s){return s.trim().split(' ').map(function(p){return p.split(',')})}
  document.querySelectorAll('svg.chart').forEach(function(svg){
    var lines=[].slice.call(svg.querySelectorAll('polyline.s')).map(function(l){
      return {name:l.getAttribute('data-name'),px:pairs(l.getAttribute('points')).map(function(p){return +p[0]}),v:pairs(l.getAttribute('data-v'))}});
    svg.addEventListener('mousemove',function(ev){
      var r=svg.getBoundingClientRect(),x=(ev.clientX-r.left)*svg.viewBox.baseVal.width/r.width,rows=[];
      lines.forEach(function(l){var best=-1,d=1e9;l.px.forEach(function(p,i){if(Math.abs(p-x)<d){d=Math.abs(p-x);best=i}});
        if(best>=0&&d<30)rows.push(l.name+': '+l.v[best][1]+' (at '+l.v[best][0]+')')});
      if(!rows.length){tip.style.display='none';return}
      tip.textContent=rows.join('\n');tip.style.display='block';tip.style.left=(ev.clientX+14)+'px';tip.style.top=(ev.clientY+14)+'px'});
    svg.addEventListener('mouseleave',function(){tip.style.display='none'});
  });
  var drawn=0;document.querySelectorAll('svg.chart').forEach(function(s){
    var b=s.getBBox();if(b.width>0&&b.height>0&&s.querySelectorAll('polyline.s, circle.pt').length>0)drawn++});
  document.body.setAttribute('data-charts',String(document.querySelectorAll('svg.chart').length));
  document.body.setAttribute('data-charts-drawn',String(drawn));
  document.body.setAttribute('data-errors',String(window.iobErrors.length));
});
"#;

pub fn page(results: &Results, views: &[ScenarioView]) -> String {
    let plan = results
        .plan
        .get("name")
        .and_then(|v| v.as_str())
        .unwrap_or("plan");
    let mut h = String::new();
    let _ = write!(h, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>iobound report: {}</title><style>{STYLE}</style><script>{SCRIPT}</script></head><body><div id=\"tip\"></div>", esc(plan));
    let _ = write!(h, "<h1>iobound report: {}</h1>", esc(plan));
    if let Some(d) = results.plan.get("description").and_then(|v| v.as_str()) {
        let _ = write!(h, "<p>{}</p>", esc(d));
    }
    if !results.complete {
        let _ = write!(
            h,
            "<div class=\"banner\"><b>Incomplete results.</b> {}</div>",
            esc(results
                .incomplete_reason
                .as_deref()
                .unwrap_or("the plan did not finish"))
        );
    }
    for section in sections_at(Place::Head) {
        h.push_str(&section.html(results));
    }
    let _ = write!(h, "<p>Scenarios: ");
    for v in views {
        let _ = write!(
            h,
            "<a href=\"#{}\">{}</a> ",
            esc(&super::slug(&v.name)),
            esc(&v.name)
        );
    }
    let _ = write!(h, "&middot; <a href=\"#contenders\">contenders</a> &middot; <a href=\"#environment\">environment</a></p>");
    for v in views {
        scenario(&mut h, results, v);
    }
    contenders(&mut h, results);
    environment(&mut h, results);
    h.push_str("</body></html>\n");
    h
}

fn scenario(h: &mut String, results: &Results, v: &ScenarioView) {
    let _ = write!(
        h,
        "<h2 id=\"{}\">{} <code>{}</code></h2><p>{}</p>",
        esc(&super::slug(&v.name)),
        esc(&v.name),
        esc(&v.path),
        esc(&v.load)
    );
    let _ = write!(h, "<table><tr><th>metric</th>");
    for (n, _) in &v.cells {
        let _ = write!(h, "<th>{}</th>", esc(n));
    }
    h.push_str("</tr>");
    for (label, cells) in summary_rows(v) {
        let _ = write!(h, "<tr><th>{}</th>", esc(&label));
        for c in cells {
            let _ = write!(h, "<td class=\"n\">{}</td>", esc(&c));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table><ul class=\"notes\">");
    for n in notes(v, results) {
        let _ = write!(h, "<li>{}</li>", esc(&n));
    }
    h.push_str("</ul><div class=\"grid\">");
    for c in v.charts.iter().filter(|c| c.has_data()) {
        h.push_str(&svg(c));
    }
    h.push_str("</div>");
}

fn contenders(h: &mut String, results: &Results) {
    for section in sections_at(Place::Tail) {
        h.push_str(&section.html(results));
    }
    h.push_str("<h2 id=\"contenders\">Contenders</h2><table><tr><th>contender</th><th>model</th><th>language</th><th>framework</th><th>runtime</th><th>runtime detected</th><th>configuration</th><th>tunables</th><th>start-up</th><th>contract</th><th>command</th></tr>");
    for c in &results.contenders {
        let t: Vec<String> = c.tunables.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let contract = match &c.verification {
            Some(v) if v.passed => "passed".to_string(),
            Some(_) => "FAILED".to_string(),
            None => "-".to_string(),
        };
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td><code>{}</code></td></tr>",
            esc(&c.label()),
            esc(&c.model),
            esc(&c.language),
            esc(&c.framework),
            esc(c.runtime.as_deref().unwrap_or("-")),
            esc(&c.detected_words()),
            esc(&c.config),
            esc(&t.join(", ")),
            c.startup_s.map(|s| format!("{s:.1} s")).unwrap_or_else(|| "-".into()),
            contract,
            esc(&c.command.join(" "))
        );
    }
    h.push_str("</table>");
    for c in results.contenders.iter().filter(|c| c.failure.is_some()) {
        let _ = write!(
            h,
            "<p><b>{}</b> not measured:</p><pre>{}</pre>",
            esc(&c.name),
            esc(c.failure.as_deref().unwrap_or(""))
        );
    }
    for r in results.runs.iter().filter(|r| r.failure.is_some()) {
        let _ = write!(
            h,
            "<p><b>{}</b> {} run {}:</p><pre>{}</pre>",
            esc(&r.contender),
            esc(&r.scenario),
            r.run,
            esc(r.failure.as_deref().unwrap_or(""))
        );
    }
}

fn environment(h: &mut String, results: &Results) {
    let e = &results.environment;
    let rows = [
        ("started", results.started_at.clone()),
        (
            "finished",
            results.finished_at.clone().unwrap_or_else(|| "-".into()),
        ),
        ("host", e.hostname.clone()),
        ("OS / kernel", format!("{} / {}", e.os, e.kernel)),
        (
            "CPU",
            format!(
                "{} ({} online), {:.0} GiB memory",
                e.cpu_model, e.cpus_online, e.memory_gib
            ),
        ),
        ("pinning", e.pinning.clone()),
        (
            "driver",
            format!("{} thread(s) on CPUs {:?}", e.driver_threads, e.driver_cpus),
        ),
        ("Java", e.java.clone().unwrap_or_else(|| "-".into())),
        (
            "database",
            if e.database.is_empty() {
                "-".into()
            } else {
                e.database.clone()
            },
        ),
        ("JVM flags", e.jvm_flags.join(" ")),
        (
            "iobound",
            format!(
                "{} ({})",
                e.harness_version,
                e.git_commit.clone().unwrap_or_else(|| "no git".into())
            ),
        ),
    ];
    h.push_str("<h2 id=\"environment\">Environment</h2><table>");
    for (k, v) in rows {
        let _ = write!(h, "<tr><th>{k}</th><td>{}</td></tr>", esc(&v));
    }
    h.push_str("</table>");
}

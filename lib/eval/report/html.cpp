// The HTML report pages (html.h). Everything is inline; numbers in
// the table carry data-v attributes so the inline script sorts them as
// numbers; without the script the rows stay sorted by error.
#include "eval/report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "eval/report/html_svg.h"
#include "eval/report/junit.h"

namespace bnorm {

namespace {

const char* kStyle = R"(<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d2330;max-width:1220px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 8px}
.meta{color:#5b6475;margin:0 0 14px;word-break:break-all}
.summary{font-size:16px;padding:12px 16px;border-radius:6px;margin:12px 0}
.summary.agree{background:#e6f4ea;border:1px solid #8cc79b} .summary.differ{background:#fdecea;border:1px solid #e39a93}
table{border-collapse:collapse;width:100%;font-size:13px} th,td{padding:4px 8px;border-bottom:1px solid #e3e6ec;text-align:left}
th{background:#f3f5f8;cursor:pointer;user-select:none;position:sticky;top:0} td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.fail td{background:#fff3f1} tr.first td{background:#fde0dc;font-weight:600} tr.skip td{color:#6b7280} tr.error td{background:#fff7e0}
code{font-size:12px} .charts{display:flex;flex-wrap:wrap;gap:16px}
svg.chart{background:#fbfcfd;border:1px solid #e3e6ec;border-radius:4px}
svg .bar{fill:#4c78a8} svg .bar.over{fill:#d9534f} svg .axis{stroke:#9aa3b2}
svg text{font:11px system-ui,sans-serif;fill:#333} svg .title{font-weight:600;font-size:12px}
svg .count{text-anchor:middle;font-size:10px} svg .tick{text-anchor:end} svg .xtitle{text-anchor:middle}
ol.path li{margin:2px 0} ol.path li.first{color:#b3261e;font-weight:600}
</style>)";

const char* kSortScript = R"(<script>
document.querySelectorAll('table.sortable th').forEach(function(th,i){th.addEventListener('click',function(){
var t=th.closest('table'),b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),d=th.dataset.dir==='a'?-1:1;
th.dataset.dir=d===1?'a':'d';rows.sort(function(x,y){var p=x.cells[i],q=y.cells[i];
var u=p.dataset.v,v=q.dataset.v;if(u!==undefined&&v!==undefined)return d*(parseFloat(u)-parseFloat(v));
return d*p.textContent.localeCompare(q.textContent);});rows.forEach(function(r){b.appendChild(r);});});});
</script>)";

std::string page(const std::string& title, const std::string& body, bool script) {
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>{}</head>\n"
                     "<body>\n{}{}</body></html>\n",
                     xml_escape(title), kStyle, body, script ? kSortScript : "");
}

std::string num(double v) {
  if (std::isinf(v)) return "<td class=\"n\" data-v=\"1e308\">inf</td>";
  return fmt::format("<td class=\"n\" data-v=\"{:.17g}\">{:.3g}</td>", v, v);
}

std::string count(int64_t v) { return fmt::format("<td class=\"n\" data-v=\"{}\">{}</td>", v, v); }

std::string shape_text(const std::vector<int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

// What "tolerance" means in this report.
std::string criterion_line(const TraceResult& r) {
  if (!r.auto_criterion) return "<p class=\"meta\">Tolerance: element by element, within rtol and atol of A.</p>\n";
  if (r.float64_blocker.empty()) {
    return "<p class=\"meta\">Tolerance: A's own rounding (A run in float64): each value's error quantiles and "
           "channel means at most 4 times A's own, plus 64 units of roundoff of its largest value.</p>\n";
  }
  return "<p class=\"meta\">Tolerance: relative to each value's magnitude (A has no float64 evaluation: " +
         xml_escape(r.float64_blocker) + ").</p>\n";
}

std::string summary(const CompareReport& rep) {
  const TraceResult& r = rep.result;
  const int sets = r.data_sets;
  if (r.first < 0) {
    return criterion_line(r) +
           fmt::format("<p id=\"summary\" class=\"summary agree\">The models agree: all {} compared value{} within "
                       "tolerance over {} input set{}.</p>",
                       r.values.size(), r.values.size() == 1 ? " is" : "s are", sets, sets == 1 ? "" : "s");
  }
  const TracedValue& v = r.values[r.first];
  const std::string by = std::isfinite(v.diff.worst) ? fmt::format("{:.3g}", v.diff.worst) : "inf";
  if (!rep.traced) {
    return criterion_line(r) +
           fmt::format("<p id=\"summary\" class=\"summary differ\">The models differ: {} <code>{}</code> has max "
                       "abs error {:.3g}, max rel {:.3g}, {} times the tolerance, {} of {} elements outside tolerance "
                       "(--trace finds the node where they part).</p>",
                       v.output ? "output" : "value", xml_escape(v.name), v.diff.diff.max_abs, v.diff.diff.max_rel, by, v.diff.diff.mismatches,
                       v.diff.diff.elements);
  }
  return criterion_line(r) + fmt::format(
      "<p id=\"summary\" class=\"summary differ\">First divergence at node <b>{}</b> (value <code>{}</code>; in B: "
      "<b>{}</b>): max abs error {:.3g}, max rel {:.3g}, {} times the tolerance, {} of {} elements outside "
      "tolerance.</p>",
      xml_escape(v.producer_a.empty() ? v.name : v.producer_a), xml_escape(v.name),
      xml_escape(v.producer_b.empty() ? v.name_b : v.producer_b), v.diff.diff.max_abs, v.diff.diff.max_rel, by,
      v.diff.diff.mismatches, v.diff.diff.elements);
}

std::string value_table(const TraceResult& r) {
  std::vector<size_t> idx(r.values.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return r.values[x].diff.worst > r.values[y].diff.worst; });
  std::string s =
      "<table id=\"values\" class=\"sortable\"><thead><tr><th>#</th><th>value</th><th>producer in A</th>"
      "<th>producer in B</th><th>type</th><th>shape</th><th>error / tolerance</th><th>max abs</th><th>max rel</th>"
      "<th>max ULP</th><th>outside</th><th>elements</th></tr></thead><tbody>\n";
  for (size_t i : idx) {
    const TracedValue& v = r.values[i];
    const char* cls = static_cast<int>(i) == r.first ? "first" : v.diff.diff.pass ? "ok" : "fail";
    s += fmt::format("<tr class=\"{}\"><td class=\"n\" data-v=\"{}\">{}</td><td><code>{}</code>{}</td><td>{}</td>"
                     "<td>{}</td><td>{}</td><td>{}</td>{}{}{}{}{}{}</tr>\n",
                     cls, v.order, v.order, xml_escape(v.name), v.output ? " (output)" : "", xml_escape(v.producer_a),
                     xml_escape(v.producer_b), dtype_name(v.dtype), shape_text(v.dims), num(v.diff.worst),
                     num(v.diff.diff.max_abs), num(v.diff.diff.max_rel), num(v.diff.max_ulp),
                     count(v.diff.diff.mismatches), count(v.diff.diff.elements));
  }
  return s + "</tbody></table>\n";
}

std::string charts(const TraceResult& r, bool traced) {
  std::vector<size_t> shown;
  if (r.first >= 0) shown.push_back(static_cast<size_t>(r.first));
  for (size_t i = 0; i < r.values.size(); ++i)
    if (r.values[i].output && static_cast<int>(i) != r.first) shown.push_back(i);
  std::string hist = "<h2>Element errors |B - A|, per decade</h2>\n<div class=\"charts\">\n";
  std::string chan = "<h2>Largest error per channel (NCHW values)</h2>\n<div class=\"charts\">\n";
  bool any_channels = false;
  for (size_t i : shown) {
    const TracedValue& v = r.values[i];
    const bool first = traced && static_cast<int>(i) == r.first;
    const std::string what = fmt::format("'{}'{}", v.name, first ? " (first divergence)" : " (output)");
    hist += error_histogram_svg(what, v.diff.histogram) + "\n";
    if (!v.diff.channel_max.empty()) {
      chan += channel_chart_svg(what, v.diff.channel_max) + "\n";
      any_channels = true;
    }
  }
  hist += "</div>\n";
  chan += any_channels ? "</div>\n" : "<p>No NCHW value among these.</p></div>\n";
  return hist + chan;
}

std::string path_list(const TraceResult& r) {
  if (r.first < 0 || r.path.empty()) return "";
  std::string s = "<h2>Path from the inputs to the first divergence (model A)</h2>\n<ol id=\"path\" class=\"path\">\n";
  for (size_t i = 0; i < r.path.size(); ++i) {
    s += fmt::format("<li{}>{}</li>\n", i + 1 == r.path.size() ? " class=\"first\"" : "", xml_escape(r.path[i]));
  }
  return s + "</ol>\n";
}

// A failing folder's failing outputs, per data set.
std::string failure_text(const BackendTestResult& r) {
  std::string message;
  for (const auto& ds : r.data_sets) {
    for (const auto& o : ds.outputs) {
      if (o.diff.pass) continue;
      const std::string what = o.diff.problem.empty()
                                   ? fmt::format("max abs {:.3g}, max rel {:.3g}, {} of {} outside tolerance",
                                                 o.diff.max_abs, o.diff.max_rel, o.diff.mismatches, o.diff.elements)
                                   : o.diff.problem;
      message += fmt::format("{}{} {}: {}", message.empty() ? "" : "; ", ds.name, o.name, what);
    }
  }
  return message;
}

}  // namespace

std::string compare_report_html(const CompareReport& rep) {
  const TraceResult& r = rep.result;
  std::string body = fmt::format("<h1>bnorm eval: {} against {}</h1>\n<p class=\"meta\">A: <code>{}</code><br>B: "
                                 "<code>{}</code><br>inputs: {}; {}</p>\n",
                                 xml_escape(rep.b), xml_escape(rep.a), xml_escape(rep.a), xml_escape(rep.b),
                                 xml_escape(rep.inputs),
                                 rep.traced ? "every value both models compute (--trace)" : "graph outputs only");
  body += summary(rep);
  body += fmt::format("<h2>Compared values ({}), largest error first</h2>\n", r.values.size());
  body += value_table(r);
  body += charts(r, rep.traced);
  body += path_list(r);
  return page("bnorm eval report", body, true);
}

std::string conformance_report_html(const std::vector<FolderRow>& rows, const Tolerance& tol) {
  int passed = 0, failed = 0, skipped = 0, errors = 0;
  std::vector<std::pair<int, std::string>> lines;  // rank (errors, failures, skips, passes), row
  for (const auto& [r, seconds] : rows) {
    std::string status, cls, message;
    int rank = 3;
    if (r.skipped) {
      status = "SKIP", cls = "skip", message = r.skip_reason, rank = 2, ++skipped;
    } else if (!r.error.empty()) {
      status = "ERROR", cls = "error", message = r.error, rank = 0, ++errors;
    } else if (r.pass()) {
      status = "PASS", cls = "ok", ++passed;
    } else {
      status = "FAIL", cls = "fail", message = failure_text(r), rank = 1, ++failed;
    }
    lines.emplace_back(rank, fmt::format("<tr class=\"{}\"><td>{}</td><td><code>{}</code></td><td>{}</td>{}</tr>\n", cls,
                                         status, xml_escape(r.name), xml_escape(message), num(seconds)));
  }
  std::stable_sort(lines.begin(), lines.end(), [](auto& x, auto& y) { return x.first < y.first; });
  std::string table =
      "<table id=\"tests\" class=\"sortable\"><thead><tr><th>status</th><th>test folder</th><th>message</th>"
      "<th>seconds</th></tr></thead><tbody>\n";
  for (const auto& l : lines) table += l.second;
  table += "</tbody></table>\n";
  const bool ok = failed == 0 && errors == 0;
  std::string body = fmt::format("<h1>bnorm eval: conformance folders</h1>\n<p class=\"meta\">rtol {:g}, atol {:g}</p>\n",
                                 tol.rtol, tol.atol);
  body += fmt::format("<p id=\"summary\" class=\"summary {}\">{} passed, {} failed, {} skipped{}. Errors and failures "
                      "first.</p>\n",
                      ok ? "agree" : "differ", passed, failed, skipped,
                      errors ? fmt::format(", {} could not run", errors) : "");
  body += table;
  return page("bnorm eval conformance report", body, true);
}

}  // namespace bnorm

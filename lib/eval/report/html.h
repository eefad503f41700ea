// bnorm eval --report FILE.html: one self-contained page (inline CSS, inline
// SVG charts, one small inline script that sorts the table; no external
// URL, nothing fetched) that reads without the script: the table comes
// sorted by error.
//
// Compare page: a summary line (the models agree, or the first divergence:
// value, producer node in each model, by how much), the per-value error
// table, a histogram of element errors per error decade (log-scale bar
// heights) for each output and the first divergent value, a bar chart of
// the largest error per channel for those that are NCHW (rank 4, channel
// axis 1), and the nodes on the path from the inputs to the divergence.
// Conformance page: counts, then one row per folder (status, message, time).
#pragma once

#include <string>
#include <vector>

#include "eval/backend/folders.h"
#include "eval/report/trace.h"

namespace bnorm {

struct CompareReport {
  std::string a, b;    // the model paths
  std::string inputs;  // where the inputs came from ("random seed 0", a folder)
  bool traced = false;
  TraceResult result;
};

std::string compare_report_html(const CompareReport& report);

struct FolderRow {
  BackendTestResult result;
  double seconds = 0;
};

std::string conformance_report_html(const std::vector<FolderRow>& rows, const Tolerance& tol);

}  // namespace bnorm

// The HTML report's inline SVG charts (html.h).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "eval/report/trace.h"

namespace bnorm {

// Element errors per decade bin (trace.h's histogram), bar heights
// log10(1 + count), each bar labelled with its count; NaN/inf bin in red.
std::string error_histogram_svg(const std::string& title, const std::array<int64_t, kErrorBins>& bins);

// Largest |b - a| per channel, linear scale; the largest bar in red.
std::string channel_chart_svg(const std::string& title, const std::vector<double>& channel_max);

}  // namespace bnorm

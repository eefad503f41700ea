// Inline SVG bar charts for the HTML report (html.h): the error
// histogram of a value and its per-channel maxima. Sizes are fixed so the
// page lays out the same everywhere; text is escaped.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "eval/report/html_svg.h"
#include "eval/report/junit.h"

namespace bnorm {

namespace {

constexpr int kWidth = 580, kHeight = 230, kLeft = 56, kBottom = 44, kTop = 36;

std::string axis(const std::string& title, const std::string& y_label) {
  return fmt::format(
      "<text x=\"{}\" y=\"16\" class=\"title\">{}</text>"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>"
      "<text x=\"12\" y=\"{}\" class=\"ylabel\" transform=\"rotate(-90 12 {})\">{}</text>",
      kLeft, xml_escape(title), kLeft, kTop, kLeft, kHeight - kBottom, kLeft, kHeight - kBottom, kWidth - 8,
      kHeight - kBottom, (kHeight - kBottom + kTop) / 2, (kHeight - kBottom + kTop) / 2, xml_escape(y_label));
}

}  // namespace

std::string error_histogram_svg(const std::string& title, const std::array<int64_t, kErrorBins>& bins) {
  const double top = std::log10(1.0 + static_cast<double>(*std::max_element(bins.begin(), bins.end())));
  const double plot_h = kHeight - kBottom - kTop;
  const double slot = static_cast<double>(kWidth - kLeft - 16) / kErrorBins;
  std::string s = fmt::format("<svg class=\"chart histogram\" width=\"{}\" "
                              "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">",
                              kWidth, kHeight, kWidth, kHeight);
  s += axis(title, "elements (log)");
  for (int k = 0; k < kErrorBins; ++k) {
    const double h = top > 0 ? plot_h * std::log10(1.0 + static_cast<double>(bins[k])) / top : 0;
    const double x = kLeft + 4 + k * slot;
    const bool over = k == kErrorBins - 1;  // NaN/inf mismatches
    s += fmt::format("<rect class=\"bar{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\">"
                     "<title>{}: {} elements</title></rect>",
                     over ? " over" : "", x, kHeight - kBottom - h, slot - 3, h, xml_escape(error_bin_label(k)), bins[k]);
    if (bins[k] > 0) {
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"count\">{}</text>", x + (slot - 3) / 2,
                       kHeight - kBottom - h - 3, bins[k]);
    }
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"xlabel\" transform=\"rotate(40 {:.1f} {})\">{}</text>",
                     x + 2, kHeight - kBottom + 12, x + 2, kHeight - kBottom + 12, xml_escape(error_bin_label(k)));
  }
  return s + "</svg>";
}

std::string channel_chart_svg(const std::string& title, const std::vector<double>& channel_max) {
  double top = 0;
  for (double v : channel_max) top = std::max(top, v);
  const double plot_h = kHeight - kBottom - kTop;
  const double slot = static_cast<double>(kWidth - kLeft - 16) / std::max<size_t>(channel_max.size(), 1);
  std::string s = fmt::format("<svg class=\"chart channels\" width=\"{}\" "
                              "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">",
                              kWidth, kHeight, kWidth, kHeight);
  s += axis(title, "max abs error");
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\">{:.3g}</text>", kLeft - 4, kTop + 4, top);
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\">0</text>", kLeft - 4, kHeight - kBottom);
  const size_t step = std::max<size_t>(1, channel_max.size() / 16);
  for (size_t c = 0; c < channel_max.size(); ++c) {
    const double h = top > 0 ? plot_h * channel_max[c] / top : 0;
    const double x = kLeft + 4 + static_cast<double>(c) * slot;
    s += fmt::format("<rect class=\"bar{}\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\">"
                     "<title>channel {}: {:.6g}</title></rect>",
                     channel_max[c] == top && top > 0 ? " over" : "", x, kHeight - kBottom - h,
                     std::max(slot - (slot > 4 ? 2 : 0), 0.5), h, c, channel_max[c]);
    if (c % step == 0) {
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"xlabel\">{}</text>", x, kHeight - kBottom + 14, c);
    }
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"xtitle\">channel (axis 1)</text>", kWidth / 2,
                   kHeight - 6);
  return s + "</svg>";
}

}  // namespace bnorm

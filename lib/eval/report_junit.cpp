#include "eval/report_junit.h"

#include <fmt/format.h>

namespace bnorm {

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        out += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? '?' : c;
    }
  }
  return out;
}

std::string junit_xml(const std::string& suite, const std::vector<JUnitCase>& cases) {
  int failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  std::string body;
  for (const auto& c : cases) {
    seconds += c.seconds;
    body += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", xml_escape(c.classname),
                        xml_escape(c.name), c.seconds);
    const std::string msg = xml_escape(c.message), details = xml_escape(c.details);
    switch (c.status) {
      case JUnitCase::Status::passed:
        body += "/>\n";
        continue;
      case JUnitCase::Status::failed:
        ++failures;
        body += fmt::format(">\n      <failure message=\"{}\" type=\"mismatch\">{}</failure>\n", msg, details);
        break;
      case JUnitCase::Status::error:
        ++errors;
        body += fmt::format(">\n      <error message=\"{}\" type=\"error\">{}</error>\n", msg, details);
        break;
      case JUnitCase::Status::skipped:
        ++skipped;
        body += fmt::format(">\n      <skipped message=\"{}\"/>\n", msg);
        break;
    }
    body += "    </testcase>\n";
  }
  const std::string counts = fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\"",
                                         cases.size(), failures, errors, skipped, seconds);
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"bnorm eval\" {}>\n  <testsuite name=\"{}\" {}>\n{}"
      "  </testsuite>\n</testsuites>\n",
      counts, xml_escape(suite), counts, body);
}

}  // namespace bnorm

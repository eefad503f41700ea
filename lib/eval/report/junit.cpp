#include "eval/report/junit.h"

#include <fmt/format.h>

#include <cstdint>
#include <utility>

namespace bnorm {

namespace {

// The code point of the UTF-8 sequence at s[i] and its length, or -1 (and
// length 1) for a byte that starts no valid sequence: overlong forms,
// surrogates and values above U+10FFFF are invalid too.
std::pair<int32_t, size_t> decode_utf8(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return {c, 1};
  size_t n = 0;
  int32_t cp = 0, min = 0;
  if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1F, min = 0x80;
  else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0F, min = 0x800;
  else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07, min = 0x10000;
  else return {-1, 1};
  if (i + n > s.size()) return {-1, 1};
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return {-1, 1};
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {-1, 1};
  return {cp, n};
}

// XML 1.0's Char production.
bool xml_char(int32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
         (cp >= 0x10000 && cp <= 0x10FFFF);
}

}  // namespace

std::string xml_escape(const std::string& s) {
  static const char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto [cp, n] = decode_utf8(s, i);
    if (cp < 0 || !xml_char(cp)) {
      out += kReplacement;
    } else {
      switch (cp) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out.append(s, i, n);
      }
    }
    i += n;
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

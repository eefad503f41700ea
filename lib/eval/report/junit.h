// JUnit XML for CI systems (bnorm eval --junit): one <testsuites> holding
// one <testsuite> whose tests/failures/errors/skipped attributes count its
// <testcase> elements; a failure carries <failure message="...">details</failure>,
// a folder that could not run <error>, a skipped one <skipped message="..."/>.
// Text is escaped for XML (&, <, >, quotes; control characters other than
// tab and newline, which XML 1.0 cannot hold, become '?').
#pragma once

#include <string>
#include <vector>

namespace bnorm {

struct JUnitCase {
  enum class Status { passed, failed, error, skipped };
  std::string classname;  // the suite's kind: "conformance", "compare"
  std::string name;
  Status status = Status::passed;
  std::string message;  // one line: why it failed, errored or was skipped
  std::string details;  // the figures, one per line
  double seconds = 0;
};

std::string junit_xml(const std::string& suite, const std::vector<JUnitCase>& cases);

// Text for XML and HTML (names in a model are any bytes): markup escaped,
// and every byte that is not valid UTF-8 or character that XML 1.0 forbids
// (control characters but tab, newline and carriage return; U+FFFE, U+FFFF)
// replaced by U+FFFD, so the document is always well-formed.
std::string xml_escape(const std::string& s);

}  // namespace bnorm

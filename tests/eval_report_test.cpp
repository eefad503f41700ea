// bnorm eval's report files: JUnit XML read back by a small XML reader, and
// the HTML report rendered by headless Chromium.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <functional>
#include <sstream>
#include <map>
#include <memory>

#include "support/test_graph.h"
#include "model/model.h"
#include "model/tensor_file.h"
#include "model/tensor_proto.h"
#include "support/cli.h"

using namespace bnorm;
using namespace bnorm::test;
namespace fs = std::filesystem;

namespace {

// Enough XML for JUnit files: elements, attributes, text, entities,
// the declaration; anything malformed fails the test.
struct Element {
  std::string tag;
  std::map<std::string, std::string> attrs;
  std::vector<std::unique_ptr<Element>> children;
  std::string text;
  int count(const std::string& t) const {
    int n = 0;
    for (const auto& c : children) n += c->tag == t;
    return n;
  }
  const Element* child(const std::string& t) const {
    for (const auto& c : children)
      if (c->tag == t) return c.get();
    return nullptr;
  }
  int attr_int(const std::string& a) const { return std::stoi(attrs.at(a)); }
};

class XmlReader {
 public:
  explicit XmlReader(std::string s) : s_(std::move(s)) {}
  std::unique_ptr<Element> document() {
    skip_space();
    if (s_.compare(i_, 5, "<?xml") == 0) i_ = s_.find("?>", i_) + 2;
    skip_space();
    auto root = element();
    skip_space();
    REQUIRE(i_ == s_.size());
    return root;
  }

 private:
  std::unique_ptr<Element> element() {
    REQUIRE(s_.at(i_) == '<');
    ++i_;
    auto e = std::make_unique<Element>();
    e->tag = name();
    for (;;) {
      skip_space();
      if (s_.compare(i_, 2, "/>") == 0) {
        i_ += 2;
        return e;
      }
      if (s_.at(i_) == '>') break;
      const std::string a = name();
      REQUIRE(s_.at(i_) == '=');
      REQUIRE(s_.at(i_ + 1) == '"');
      const size_t end = s_.find('"', i_ + 2);
      REQUIRE(end != std::string::npos);
      REQUIRE(!e->attrs.count(a));
      e->attrs[a] = unescape(s_.substr(i_ + 2, end - i_ - 2));
      i_ = end + 1;
    }
    ++i_;
    for (;;) {
      const size_t lt = s_.find('<', i_);
      REQUIRE(lt != std::string::npos);
      e->text += unescape(s_.substr(i_, lt - i_));
      i_ = lt;
      if (s_.compare(i_, 2, "</") == 0) {
        i_ += 2;
        REQUIRE(name() == e->tag);
        REQUIRE(s_.at(i_) == '>');
        ++i_;
        return e;
      }
      e->children.push_back(element());
    }
  }
  std::string name() {
    const size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '-')) ++i_;
    REQUIRE(i_ > start);
    return s_.substr(start, i_ - start);
  }
  std::string unescape(const std::string& t) {
    std::string out;
    for (size_t k = 0; k < t.size(); ++k) {
      REQUIRE(t[k] != '<');
      if (t[k] != '&') {
        out += t[k];
        continue;
      }
      const size_t semi = t.find(';', k);
      REQUIRE(semi != std::string::npos);
      static const std::map<std::string, char> entities{
          {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
      out += entities.at(t.substr(k + 1, semi - k - 1));
      k = semi;
    }
    return out;
  }
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  std::string s_;
  size_t i_ = 0;
};

// The suite's counts agree with its testcases; returns the suite.
const Element& check_junit(const Element& root) {
  REQUIRE(root.tag == "testsuites");
  REQUIRE(root.count("testsuite") == 1);
  const Element& suite = *root.child("testsuite");
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const auto& c : suite.children) {
    REQUIRE(c->tag == "testcase");
    CHECK(!c->attrs.at("name").empty());
    CHECK(!c->attrs.at("classname").empty());
    CHECK(c->children.size() <= 1);
    ++tests;
    failures += c->count("failure");
    errors += c->count("error");
    skipped += c->count("skipped");
  }
  for (const Element* e : {&root, &suite}) {
    CHECK(e->attr_int("tests") == tests);
    CHECK(e->attr_int("failures") == failures);
    CHECK(e->attr_int("errors") == errors);
    CHECK(e->attr_int("skipped") == skipped);
  }
  return suite;
}

const Element* testcase(const Element& suite, const std::string& name) {
  for (const auto& c : suite.children)
    if (c->attrs.at("name") == name) return c.get();
  return nullptr;
}

// A folder of four test folders: one passes, one fails, one is skipped
// (an op of another domain), one cannot run (model.onnx is not a model).
fs::path conformance_mix(const TempDir& tmp) {
  const fs::path root = tmp / "suite";
  const fs::path src = fs::path(ONNX_TESTDATA_DIR) / "node/test_batchnorm_example";
  fs::create_directories(root);
  fs::copy(src, root / "test_pass", fs::copy_options::recursive);
  fs::copy(src, root / "test_fail<&>", fs::copy_options::recursive);
  Tensor y = read_tensor_file(root / "test_fail<&>/test_data_set_0/output_0.pb");
  y.data<float>()[3] += 1.0f;
  write_tensor_file(y, root / "test_fail<&>/test_data_set_0/output_0.pb");
  GraphBuilder b(13);
  b.input("x", DType::float32, {2});
  b.node("Frobnicate", {"x"}, {"y"}).set_domain("com.example");
  b.output("y");
  Model m = b.model();
  fs::create_directories(root / "test_skip/test_data_set_0");
  save_model(m, root / "test_skip/model.onnx");
  Tensor x(DType::float32, {2});
  write_tensor_file(x, root / "test_skip/test_data_set_0/input_0.pb");
  write_tensor_file(x, root / "test_skip/test_data_set_0/output_0.pb");
  fs::create_directories(root / "test_broken");
  write_file(root / "test_broken/model.onnx", "not a model");
  return root;
}

}  // namespace

TEST_CASE("eval DIR --junit writes one testcase per folder with consistent counts", "[cli][trace][junit]") {
  TempDir tmp;
  const fs::path root = conformance_mix(tmp);
  const auto r = run_cli({"eval", root.string(), "--junit", (tmp / "j.xml").string()});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);  // a folder could not run
  const auto doc = XmlReader(read_file(tmp / "j.xml")).document();
  const Element& suite = check_junit(*doc);
  CHECK(suite.attr_int("tests") == 4);
  CHECK(suite.attr_int("failures") == 1);
  CHECK(suite.attr_int("errors") == 1);
  CHECK(suite.attr_int("skipped") == 1);
  REQUIRE(testcase(suite, "test_pass"));
  CHECK(testcase(suite, "test_pass")->children.empty());
  const Element* fail = testcase(suite, "test_fail<&>");
  REQUIRE(fail);
  REQUIRE(fail->child("failure"));
  CHECK(fail->child("failure")->attrs.at("message").find("test_data_set_0 y: max abs 1") == 0);
  CHECK(fail->child("failure")->text.find("elements outside tolerance") != std::string::npos);
  REQUIRE(testcase(suite, "test_skip"));
  CHECK(testcase(suite, "test_skip")->child("skipped")->attrs.at("message").find("com.example") != std::string::npos);
  REQUIRE(testcase(suite, "test_broken"));
  CHECK(testcase(suite, "test_broken")->child("error"));
}

TEST_CASE("eval --compare --junit writes one testcase per output, and one for the values inside both models", "[cli][trace][junit]") {
  TempDir tmp;
  for (const char* op : {"Neg", "Identity"}) {
    GraphBuilder b(13);
    b.input("x", DType::float32, {3});
    b.node("Relu", {"x"}, {"r"}, "relu");
    b.node(op, {"x"}, {"n"}, "neg");
    b.output("r");
    b.output("n");
    Model m = b.model();
    save_model(m, tmp / (std::string(op) == "Neg" ? "a.onnx" : "b.onnx"));
  }
  const auto r = run_cli({"eval", (tmp / "a.onnx").string(), "--compare", (tmp / "b.onnx").string(), "--random", "1",
                          "--trace", "--junit", (tmp / "c.xml").string()});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const auto doc = XmlReader(read_file(tmp / "c.xml")).document();
  const Element& suite = check_junit(*doc);
  // Two outputs, and (auto criterion) the values inside both models: none here.
  CHECK(suite.attr_int("tests") == 3);
  CHECK(suite.attr_int("failures") == 1);
  REQUIRE(testcase(suite, "values inside both models"));
  CHECK(testcase(suite, "values inside both models")->children.empty());
  REQUIRE(testcase(suite, "r"));
  CHECK(testcase(suite, "r")->children.empty());
  REQUIRE(testcase(suite, "n"));
  REQUIRE(testcase(suite, "n")->child("failure"));
  CHECK(testcase(suite, "n")->child("failure")->text.find("first divergence: 'n' produced in A by neg") !=
        std::string::npos);
}

namespace {

struct Rendered {
  bool started = false;
  std::string why_not;  // when Chromium could not start
  std::string dom;
  std::vector<std::string> console;  // lines the page logged (errors included)
};

// Headless Chromium on a local file: its DOM after load, a screenshot, and
// what the page logged to the console.
Rendered render(const fs::path& page, const fs::path& screenshot, const TempDir& tmp) {
  Rendered r;
  const char* candidates[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
  std::string exe;
  for (const char* c : candidates)
    if (fs::exists(c)) exe = c;
  if (exe.empty()) {
    r.why_not = "no chromium executable (apt-get install chromium)";
    return r;
  }
  const std::string flags = fmt::format(
      "--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
      "--disable-sync --no-first-run --enable-logging=stderr --v=0 --window-size=1280,1600 --user-data-dir='{}'",
      (tmp / "chromium-profile").string());
  const fs::path err = tmp / "chromium.err", dom = tmp / "dom.html";
  const std::string url = "file://" + fs::absolute(page).string();
  const std::string dump = fmt::format("timeout 120 {} {} --dump-dom '{}' > '{}' 2> '{}'", exe, flags, url,
                                       dom.string(), err.string());
  const int rc = std::system(dump.c_str());
  r.dom = fs::exists(dom) ? read_file(dom) : "";
  if (rc != 0 || r.dom.find("<html") == std::string::npos) {
    r.why_not = fmt::format("chromium could not start (exit {}): {}", rc, fs::exists(err) ? read_file(err).substr(0, 400) : "");
    return r;
  }
  r.started = true;
  std::istringstream lines(read_file(err));
  for (std::string line; std::getline(lines, line);)
    if (line.find(":CONSOLE") != std::string::npos) r.console.push_back(line);
  const std::string shot = fmt::format("timeout 120 {} {} --screenshot='{}' '{}' > /dev/null 2>&1", exe, flags,
                                       screenshot.string(), url);
  CHECK(std::system(shot.c_str()) == 0);
  return r;
}

int occurrences(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The file fetches nothing and names no external resource.
void check_self_contained(const std::string& html) {
  for (const char* bad : {"http:", "https:", "//www", " src=", " href=", "url(", "@import"}) {
    INFO(bad);
    CHECK(html.find(bad) == std::string::npos);
  }
}

bool png(const fs::path& p) {
  const std::string b = fs::exists(p) ? read_file(p) : "";
  return b.size() > 1000 && b.compare(1, 3, "PNG") == 0;
}

}  // namespace

TEST_CASE("eval --compare --trace --report renders in Chromium with summary, table, charts and path",
          "[cli][trace][html]") {
  TempDir tmp;
  Model m = load_model(testdata("demo_opset6.onnx"));
  for (auto& t : *m.proto.mutable_graph()->mutable_initializer()) {
    if (t.name() != "bn1.scale") continue;
    Tensor v = decode_tensor(t);
    v.data<float>()[0] += 0.5f;
    encode_tensor(v, &t);
  }
  save_model(m, tmp / "changed.onnx");
  const auto r = run_cli({"eval", testdata("demo_opset6.onnx").string(), "--compare", (tmp / "changed.onnx").string(),
                          "--trace", "--report", (tmp / "r.html").string()});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 1);
  const std::string html = read_file(tmp / "r.html");
  check_self_contained(html);
  const Rendered page = render(tmp / "r.html", tmp / "r.png", tmp);
  if (!page.started) {
    WARN("Chromium rendering skipped: " << page.why_not);
    return;
  }
  INFO(page.dom.substr(0, 3000));
  CHECK(page.console.empty());
  CHECK(page.dom.find("id=\"summary\" class=\"summary differ\">First divergence at node <b>bn1</b>") != std::string::npos);
  CHECK(page.dom.find("256 of 2048 elements outside tolerance") != std::string::npos);
  // One row per value of the demo model's 9 nodes; the first divergence marked.
  const size_t body = page.dom.find("<tbody>");
  REQUIRE(body != std::string::npos);
  const std::string rows = page.dom.substr(body, page.dom.find("</tbody>") - body);
  CHECK(occurrences(rows, "<tr ") == 9);
  CHECK(occurrences(rows, "class=\"first\"") == 1);
  // Histograms of bn1_out and logits, the channel chart of bn1_out (NCHW).
  CHECK(occurrences(page.dom, "<svg class=\"chart histogram\"") == 2);
  CHECK(occurrences(page.dom, "<svg class=\"chart channels\"") == 1);
  CHECK(occurrences(page.dom, "<title>channel ") == 8);
  CHECK(page.dom.find("<ol id=\"path\" class=\"path\">\n<li>conv1</li>\n<li class=\"first\">bn1</li>") !=
        std::string::npos);
  CHECK(png(tmp / "r.png"));
}

TEST_CASE("eval DIR --report renders the pass/fail/skip/error table in Chromium", "[cli][trace][html]") {
  TempDir tmp;
  const fs::path root = conformance_mix(tmp);
  const auto r = run_cli({"eval", root.string(), "--report", (tmp / "d.html").string()});
  CHECK(r.exit_code == 2);
  check_self_contained(read_file(tmp / "d.html"));
  const Rendered page = render(tmp / "d.html", tmp / "d.png", tmp);
  if (!page.started) {
    WARN("Chromium rendering skipped: " << page.why_not);
    return;
  }
  INFO(page.dom.substr(0, 3000));
  CHECK(page.console.empty());
  CHECK(page.dom.find("1 passed, 1 failed, 1 skipped, 1 could not run.") != std::string::npos);
  CHECK(page.dom.find("<tr class=\"ok\"><td>PASS</td><td><code>test_pass</code>") != std::string::npos);
  CHECK(page.dom.find("<tr class=\"fail\"><td>FAIL</td><td><code>test_fail&lt;&amp;&gt;</code></td><td>test_data_set_0 y: "
                      "max abs 1") != std::string::npos);
  CHECK(page.dom.find("<tr class=\"skip\"><td>SKIP</td><td><code>test_skip</code></td><td>op com.example.Frobnicate") !=
        std::string::npos);
  CHECK(page.dom.find("<tr class=\"error\"><td>ERROR</td><td><code>test_broken</code>") != std::string::npos);
  CHECK(png(tmp / "d.png"));
}

TEST_CASE("the rendering check sees a page's script errors", "[cli][trace][html]") {
  TempDir tmp;
  write_file(tmp / "bad.html", "<!DOCTYPE html><html><body><p>x</p><script>undefined_function();</script></body></html>");
  const Rendered page = render(tmp / "bad.html", tmp / "bad.png", tmp);
  if (!page.started) {
    WARN("Chromium rendering skipped: " << page.why_not);
    return;
  }
  REQUIRE(page.console.size() == 1);
  CHECK(page.console[0].find("undefined_function") != std::string::npos);
}

TEST_CASE("reports stay well-formed whatever bytes a model's names hold", "[cli][junit][html]") {
  TempDir tmp;
  // y = Identity(x), the output named with a byte that is not UTF-8, a
  // control character XML forbids, and markup.
  const std::string name = std::string("y\xff\x01<&>\"'") + "\xe2\x82";  // ends inside a 3-byte sequence
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("names");
  for (auto [list, n] : {std::pair{g->add_input(), std::string("x")}, std::pair{g->add_output(), name}}) {
    list->set_name(n);
    auto* tt = list->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(3);
  }
  auto* n = g->add_node();
  n->set_op_type("Identity");
  n->add_input("x");
  n->add_output(name);
  write_file(tmp / "m.onnx", m.SerializeAsString());
  const auto r = run_cli({"eval", (tmp / "m.onnx").string(), "--compare", (tmp / "m.onnx").string(), "--random", "0",
                          "--trace", "--junit", (tmp / "r.xml").string(), "--report", (tmp / "r.html").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Python's XML parser (expat) refuses invalid UTF-8 and forbidden characters.
  const std::string check_xml = "/usr/bin/python3 -c \"import sys, xml.dom.minidom as d; d.parse(sys.argv[1])\" " +
                                (tmp / "r.xml").string();
  CHECK(std::system(check_xml.c_str()) == 0);
  const std::string check_html = "/usr/bin/python3 -c \"import sys; open(sys.argv[1], 'rb').read().decode('utf-8')\" " +
                                 (tmp / "r.html").string();
  CHECK(std::system(check_html.c_str()) == 0);
  // The replacement is visible: U+FFFD for the bad byte, the control character and the cut sequence.
  const std::string xml = read_file(tmp / "r.xml");
  CHECK_THAT(xml, Catch::Contains("y\xef\xbf\xbd\xef\xbf\xbd&lt;&amp;&gt;&quot;&apos;\xef\xbf\xbd"));
  CHECK_THAT(read_file(tmp / "r.html"), Catch::Contains("y\xef\xbf\xbd\xef\xbf\xbd&lt;&amp;&gt;"));
}

// Reads the generated schema table once into OpSchemaInfo rows; the
// checks compare a node against one row.
#include "transforms/upgrade/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace bnorm {

namespace {

struct Row {
  const char* op;
  int version, min_in, max_in, min_out, max_out;
  const char *attrs, *inputs, *outputs, *types;
};

constexpr Row kRows[] = {
#include "transforms/upgrade/steps/schema_table.inc"
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

// "name?:T" -> {name, optional, T}. Fixed types hold no ':' of their own.
std::vector<SchemaValue> values(const char* text) {
  std::vector<SchemaValue> out;
  // Types like "seq(tensor(float))" hold no ',' but map(...) does: split at ',' followed by a name and ':'.
  const std::string s = text;
  size_t start = 0;
  while (start < s.size()) {
    size_t colon = s.find(':', start);
    if (colon == std::string::npos) break;
    size_t next = s.size();
    for (size_t k = colon; k < s.size(); ++k) {
      if (s[k] != ',') continue;
      const size_t c2 = s.find(':', k);
      const size_t p2 = s.find('(', k);
      if (c2 != std::string::npos && (p2 == std::string::npos || c2 < p2)) {
        next = k;
        break;
      }
    }
    SchemaValue v;
    v.name = s.substr(start, colon - start);
    v.type = s.substr(colon + 1, next - colon - 1);
    while (!v.name.empty() && (v.name.back() == '?' || v.name.back() == '*')) {
      (v.name.back() == '?' ? v.optional : v.variadic) = true;
      v.name.pop_back();
    }
    out.push_back(v);
    start = next + 1;
  }
  return out;
}

OpSchemaInfo parse(const Row& r) {
  OpSchemaInfo s;
  s.op = r.op;
  s.version = r.version;
  s.min_in = r.min_in;
  s.max_in = r.max_in;
  s.min_out = r.min_out;
  s.max_out = r.max_out;
  for (auto a : split(r.attrs, ',')) {
    const bool required = !a.empty() && a.back() == '!';
    if (required) a.pop_back();
    s.attrs.emplace_back(a, required);
  }
  s.inputs = values(r.inputs);
  s.outputs = values(r.outputs);
  for (const auto& t : split(r.types, ';')) {
    const size_t eq = t.find('=');
    if (eq == std::string::npos) continue;
    s.types.emplace_back(t.substr(0, eq), split(t.substr(eq + 1), '|'));
  }
  return s;
}

const std::map<std::pair<std::string, int>, OpSchemaInfo>& table() {
  static const auto rows = [] {
    std::map<std::pair<std::string, int>, OpSchemaInfo> out;
    for (const Row& r : kRows) out.emplace(std::make_pair(std::string(r.op), r.version), parse(r));
    return out;
  }();
  return rows;
}

const SchemaValue* slot(const std::vector<SchemaValue>& v, int i) {
  if (v.empty() || i < 0) return nullptr;
  if (i < static_cast<int>(v.size())) return &v[i];
  return v.back().variadic ? &v.back() : nullptr;
}

}  // namespace

bool OpSchemaInfo::has_attr(std::string_view name) const {
  return std::any_of(attrs.begin(), attrs.end(), [&](const auto& a) { return a.first == name; });
}

std::vector<std::string> OpSchemaInfo::allowed(bool input, int i) const {
  const SchemaValue* v = slot(input ? inputs : outputs, i);
  if (!v) return {};
  if (v->type.find('(') != std::string::npos) return {v->type};  // a fixed type: tensor(int64), seq(...)
  for (const auto& [name, list] : types) {
    if (name == v->type) return list;
  }
  return {};
}

const OpSchemaInfo* schema_info(std::string_view op, int version) {
  const auto& t = table();
  const auto it = t.find({std::string(op), version});
  return it == t.end() ? nullptr : &it->second;
}

std::string tensor_type_name(int32_t elem_type) {
  static const char* const kNames[] = {
      "",           "float",          "uint8",      "int8",           "uint16",    "int16",
      "int32",      "int64",          "string",     "bool",           "float16",   "double",
      "uint32",     "uint64",         "complex64",  "complex128",     "bfloat16",  "float8e4m3fn",
      "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",        "int4",      "float4e2m1",
      "float8e8m0",     "uint2",      "int2"};
  if (elem_type <= 0 || elem_type >= static_cast<int32_t>(std::size(kNames))) {
    return elem_type == 0 ? "" : fmt::format("tensor(type {})", elem_type);
  }
  return fmt::format("tensor({})", kNames[elem_type]);
}

int64_t ir_version_of_type(int32_t elem_type) {
  if (elem_type >= 17 && elem_type <= 20) return 9;
  if (elem_type == 21 || elem_type == 22) return 10;
  if (elem_type == 23) return 11;
  if (elem_type == 24) return 12;
  if (elem_type == 25 || elem_type == 26) return 13;
  return 3;
}

std::string type_text(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) return tensor_type_name(t.tensor_type().elem_type());
  if (t.has_sequence_type() && t.sequence_type().has_elem_type()) {
    const std::string e = type_text(t.sequence_type().elem_type());
    return e.empty() ? "" : "seq(" + e + ")";
  }
  if (t.has_optional_type() && t.optional_type().has_elem_type()) {
    const std::string e = type_text(t.optional_type().elem_type());
    return e.empty() ? "" : "optional(" + e + ")";
  }
  return "";
}

std::string type_problem(const onnx::NodeProto& n, const OpSchemaInfo& schema, const TypeOf& type_of) {
  for (int side = 0; side < 2; ++side) {
    const bool input = side == 0;
    const auto& names = input ? n.input() : n.output();
    for (int i = 0; i < names.size(); ++i) {
      if (names.Get(i).empty()) continue;
      const std::string name = type_of(names.Get(i));
      if (name.empty()) continue;
      const auto allowed = schema.allowed(input, i);
      if (allowed.empty()) continue;
      if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
      return fmt::format("{} {} '{}' is {}, a type {}-{} does not have", input ? "input" : "output", i, names.Get(i),
                         name, schema.op, schema.version);
    }
  }
  return "";
}

std::string check_schema(const onnx::NodeProto& n, const OpSchemaInfo& s, const TypeOf& type_of) {
  auto count_problem = [](const char* what, int count, int lo, int hi) -> std::string {
    if (count >= lo && (hi < 0 || count <= hi)) return "";
    return fmt::format("{} {}; the schema takes {} to {}", count, what, lo, hi < 0 ? std::string("any number")
                                                                             : std::to_string(hi));
  };
  int inputs = n.input_size();
  while (inputs > 0 && n.input(inputs - 1).empty()) --inputs;  // trailing optional inputs left out
  if (auto p = count_problem("inputs", inputs, s.min_in, s.max_in); !p.empty()) return p;
  if (auto p = count_problem("outputs", n.output_size(), s.min_out, s.max_out); !p.empty()) return p;
  for (const auto& a : n.attribute()) {
    if (!s.has_attr(a.name())) return fmt::format("attribute '{}' is not an attribute of {}-{}", a.name(), s.op, s.version);
  }
  for (const auto& attr : s.attrs) {
    // Not a structured binding: C++17 lambdas cannot capture those (clang refuses).
    const std::string& name = attr.first;
    if (!attr.second) continue;
    const bool there = std::any_of(n.attribute().begin(), n.attribute().end(), [&](const auto& a) { return a.name() == name; });
    if (!there) return fmt::format("required attribute '{}' of {}-{} is missing", name, s.op, s.version);
  }
  for (int i = 0; i < static_cast<int>(s.inputs.size()) && i < n.input_size(); ++i) {
    if (n.input(i).empty() && !s.inputs[i].optional && !s.inputs[i].variadic) {
      return fmt::format("input {} ('{}') is required by {}-{}", i, s.inputs[i].name, s.op, s.version);
    }
  }
  return type_problem(n, s, type_of);
}

}  // namespace bnorm

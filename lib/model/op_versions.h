// Which schema versions every op of the default ONNX domain has, opsets 1 to
// BNORM_NEWEST_OPSET (28): the one table bnorm reads op versions from. It is
// generated from ONNX 1.23's Changelog.md by scripts/gen_op_versions.py
// (op_versions_table.inc); ONNX 1.12's schema registry, which stops at 17, is
// not consulted for versions.
//
// Resolution: a node of op O in a model whose default-domain opset is N runs
// under O's schema version V = the largest since-version of O not above N.
// O does not exist at N when N is below its first version, when V is a
// version the Changelog marks deprecated (Upsample-10, Scatter-11: the op is
// gone from that opset on), or when O is an experimental op of opsets 1..9
// and N >= 10. GroupNormalization-18 is marked deprecated too, but at 18..20
// it is the only version there is: it resolves, with `deprecated` set.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bnorm {

struct OpHistory {
  std::string_view op;
  std::vector<int> versions;  // since-versions, ascending
  int deprecated = 0;         // the version marked deprecated, or 0
  int experimental_until = 0; // experimental op (version 1): gone from this opset on, or 0
};

// The newest opset the table knows.
int newest_known_opset();

// The history of `op` (default domain), or nullptr for an op ONNX never had.
const OpHistory* op_history(std::string_view op);

struct ResolvedOp {
  int version = 0;          // the schema version in force; 0: the op does not exist at this opset
  bool known = false;       // op is in the table at all
  bool deprecated = false;  // version is the one marked deprecated
  std::string why_not;      // when version == 0: "introduced at opset 18", "removed at opset 10", ...
};

// The schema version of `op` at default-domain `opset` (opset < 1 reads as 1).
ResolvedOp resolve_op(std::string_view op, int64_t opset);

// The version in force at `opset`, or 0 when the op does not exist there.
int op_version_at(std::string_view op, int64_t opset);

// The versions of `op` in (from, to], ascending: the schema changes a model
// crosses going from opset `from` up to opset `to`.
std::vector<int> versions_between(std::string_view op, int64_t from, int64_t to);

// Every op in the table, sorted.
const std::vector<OpHistory>& all_op_histories();

}  // namespace bnorm

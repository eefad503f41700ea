// GraphIndex: who produces and who uses every value of a model, in the main
// graph and in every subgraph (If/Loop/Scan bodies), plus constant
// resolution. Built once over a ModelProto that must outlive it and must
// not change while it is in use (pointers point into it).
//
// Scopes: each graph is a scope whose parent is the graph holding the node
// that owns it. A name is looked up in its own scope first, then outward,
// as ONNX resolves outer-scope references. A use from inside a subgraph is
// recorded on the value where it is defined, so "who uses X" sees it.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace bnorm {

class GraphIndex {
 public:
  struct Scope;

  struct Use {
    const onnx::NodeProto* node;
    int input;  // index into node->input()
    const Scope* scope;
  };

  struct Value {
    std::string name;
    const Scope* scope = nullptr;                     // where it is defined
    const onnx::NodeProto* producer = nullptr;        // node output ...
    int output = -1;                                  // ... at this index
    const onnx::TensorProto* initializer = nullptr;   // an initializer ...
    const onnx::ValueInfoProto* graph_input = nullptr;  // ... and/or a graph input
    bool graph_output = false;
    std::vector<Use> uses;
  };

  struct Scope {
    const onnx::GraphProto* graph = nullptr;
    const Scope* parent = nullptr;
    const onnx::NodeProto* owner = nullptr;  // the If/Loop/Scan holding this graph
    std::string path;                        // "main", "main/if1.then_branch"
    std::unordered_map<std::string, Value> values;
    std::unordered_map<std::string, const onnx::ValueInfoProto*> value_info;
  };

  // Where a constant value comes from.
  enum class ConstKind { initializer, initializer_graph_input, constant_node, computed };
  struct Constant {
    ConstKind kind;
    const onnx::TensorProto* tensor;   // the data (an owned copy for value_float(s)/value_int(s))
    const onnx::NodeProto* node;       // the Constant / Identity / ConstantOfShape node
  };

  explicit GraphIndex(const onnx::ModelProto& model);
  GraphIndex(const GraphIndex&) = delete;
  GraphIndex& operator=(const GraphIndex&) = delete;

  const Scope& main() const { return *scopes_.front(); }
  // Every scope, parents before children.
  const std::vector<std::unique_ptr<Scope>>& scopes() const { return scopes_; }
  // The scope whose graph holds `node`.
  const Scope& scope_of(const onnx::NodeProto* node) const;

  // Looks `name` up from `from` outward; nullptr if nothing defines it.
  const Value* find(const Scope& from, const std::string& name) const;
  // The value's constant data, if it is a constant: an initializer (in IR<4
  // models and others, also when it is listed as a graph input: bnorm treats
  // such initializers as constants), or the output of a Constant node
  // (value, value_float, value_floats, value_int, value_ints), or computed
  // from constants by Identity or ConstantOfShape (kind `computed`; at most
  // kMaxComputedElements elements).
  std::optional<Constant> constant(const Scope& from, const std::string& name) const;
  // The declared type of a value: graph input/output, value_info, or an
  // initializer's type (as a TypeProto). nullptr when nothing declares it.
  const onnx::TypeProto* declared_type(const Scope& from, const std::string& name) const;

  static std::string describe(ConstKind k);
  static constexpr int64_t kMaxComputedElements = int64_t{1} << 26;

 private:
  void add_graph(const onnx::GraphProto& g, const Scope* parent, const onnx::NodeProto* owner, std::string path);
  void record_uses(const Scope& scope);
  std::optional<Constant> constant_of_shape(const Scope& from, const onnx::NodeProto& node, const std::string& name) const;

  std::vector<std::unique_ptr<Scope>> scopes_;
  std::unordered_map<const onnx::NodeProto*, const Scope*> node_scope_;
  // Owned data for Constant attributes that are not TensorProtos, and types
  // synthesized from initializers.
  mutable std::vector<std::unique_ptr<onnx::TensorProto>> owned_tensors_;
  mutable std::vector<std::unique_ptr<onnx::TypeProto>> owned_types_;
};

}  // namespace bnorm

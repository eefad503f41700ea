// bnorm::Error: the one error type of bnorm, thrown by every function of
// its API (and of the library behind it) for anything a user can cause: bad
// usage, a model that cannot be read, a case bnorm refuses, a numeric check
// that failed. It carries what went wrong and where: the file, the node
// (label, op and version) and "while ..." contexts; message() puts them in
// one line ("model.onnx: node 'bn3' (BatchNormalization-9): ..."), the way
// the CLI prints it, and exit_code() is the CLI's exit code for it. The
// library never exits, never aborts.
#pragma once

#include <exception>
#include <string>
#include <vector>

namespace bnorm {

enum class ErrorKind {
  usage,        // the command line is wrong                      -> exit 2
  input,        // a file or model is unreadable or invalid        -> exit 2
  unsupported,  // valid, but a case bnorm does not handle         -> exit 2
  check_failed, // a numeric check did not hold                    -> exit 1
};

// Process exit codes, the same for every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;

class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message, std::string hint = {});

  // Context, filled in by whichever layer knows it. Each returns *this so a
  // catch block can add and rethrow: `catch (Error& e) { e.in_file(p); throw; }`.
  Error& in_file(const std::string& file);         // kept if already set
  Error& at_node(const std::string& name, const std::string& op, int version = 0);
  Error& context(const std::string& what);         // "while folding node 'bn3'"
  Error& with_hint(const std::string& hint);

  ErrorKind kind() const { return kind_; }
  int exit_code() const { return kind_ == ErrorKind::check_failed ? kExitCheckFailed : kExitBadInput; }
  const std::string& file() const { return file_; }
  const std::string& node() const { return node_; }  // the node's label
  const std::string& op() const { return op_; }
  int version() const { return version_; }
  const std::string& bare_message() const { return message_; }
  const std::string& hint() const { return hint_; }

  // "model.onnx: node 'bn3' (BatchNormalization-9): input 'scale' has shape [4], expected [3]"
  std::string message() const;
  const char* what() const noexcept override;

 private:
  ErrorKind kind_;
  std::string message_, hint_, file_, node_, op_;
  int version_ = 0;
  std::vector<std::string> contexts_;
  mutable std::string what_;
};

}  // namespace bnorm

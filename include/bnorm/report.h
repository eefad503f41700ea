// What a command reports, as data and as JSON: the same document `bnorm
// COMMAND --json` prints, whose schema is docs/schema/<kind>.json (its
// "schema" field names it, "bnorm.fold/1").
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace bnorm::api {

struct Report {
  nlohmann::json data;  // the document
  int exit_code = 0;    // the CLI's: 0, or 1 when a numeric check failed (fold or upgrade --verify, compare)

  bool passed() const { return exit_code == 0; }
  // The document as JSON text, indented by 2, always valid UTF-8.
  std::string json() const;
};

}  // namespace bnorm::api

// bnorm fold IN.onnx -o OUT.onnx [--json] [--external-data NAME]
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "model/model.h"
#include "transforms/fold.h"

namespace bnorm::cli {

namespace {

struct FoldOptions {
  std::string input, output, external_data;
  bool json = false;
};

nlohmann::json to_json(const FoldReport& r, const FoldOptions& o) {
  nlohmann::json folded = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& f : r.folded) {
    folded.push_back({{"graph", f.graph}, {"bn", f.bn}, {"producer", f.producer}, {"producer_op", f.producer_op}});
  }
  for (const auto& s : r.skipped) skipped.push_back({{"graph", s.graph}, {"bn", s.bn}, {"reason", s.reason}});
  return {{"input", o.input}, {"output", o.output}, {"batch_norm_nodes", r.total}, {"folded", folded},
          {"not_folded", skipped}};
}

}  // namespace

Runner add_fold(CLI::App& app) {
  auto opt = std::make_shared<FoldOptions>();
  CLI::App* sub = app.add_subcommand("fold", "Fold inference BatchNormalization into the preceding Conv, ConvTranspose, Gemm or MatMul");
  sub->add_option("model", opt->input, "The .onnx model to read (never modified)")->required();
  sub->add_option("-o,--output", opt->output, "Where to write the folded model")->required();
  sub->add_option("--external-data", opt->external_data,
                  "Side file for external data, relative to the output (default: OUTPUT.data)");
  sub->add_flag("--json", opt->json, "Print the report as JSON (schema in docs/cli.md)");
  return [opt]() {
    Model model = load_model(opt->input);
    const FoldReport r = fold_batch_norms(model);
    SaveOptions save;
    save.external_data_name = opt->external_data;
    save_model(model, opt->output, save);
    if (opt->json) {
      std::cout << to_json(r, *opt).dump(2) << "\n";
      return 0;
    }
    std::cout << fmt::format("folded {} of {} BatchNormalization nodes\n", r.folded.size(), r.total);
    for (const auto& f : r.folded) {
      std::cout << fmt::format("  folded   {} into {} '{}'{}\n", f.bn, f.producer_op, f.producer,
                               f.graph == "main" ? "" : " (" + f.graph + ")");
    }
    for (const auto& s : r.skipped) {
      std::cout << fmt::format("  kept     {}: {}{}\n", s.bn, s.reason, s.graph == "main" ? "" : " (" + s.graph + ")");
    }
    std::cout << fmt::format("wrote {}\n", opt->output);
    return 0;
  };
}

}  // namespace bnorm::cli

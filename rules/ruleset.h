// Rule sets in the consortium's compliance-checker schema.
//
// A rules root holds `compliance_checker/<usage>_<version>/*.yaml` and
// `rcp_checker/<usage>_<version>/rcps_<benchmark>.json`. Every YAML file is a
// list of BEGIN / KEY / END records whose code is compiled when the file is
// loaded (at once, or on first use); a construct outside the supported
// subset is a load error naming the file,
// the record and the construct.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rules/interp.h"

namespace referee::rules {

struct KeyRecord {
  std::string name;
  std::string req;  // "" when absent
  Code pre, post, first_check, atleast_one_check;
  std::vector<Code> checks;
  bool has_pre = false, has_post = false, has_first_check = false, has_atleast_one = false;
};

struct RuleFile {
  std::string rel;   // "training_3.1.0/closed_common.yaml", as enqueue_config names it
  std::string path;  // on disk
  bool has_begin = false;
  Code begin;
  bool has_end = false;
  bool has_end_pre = false;
  Code end_pre;
  std::vector<Code> end_checks;
  std::vector<KeyRecord> keys;  // first-seen order; a later record with the same NAME replaces
  int find(const std::string& name) const;
};

// A ruleset id such as "training-3.1.0" split into its parts.
struct RulesetId {
  std::string usage;    // "training"
  std::string version;  // "3.1.0"
  std::string dir() const { return usage + "_" + version; }
  std::string id() const { return usage + "-" + version; }
  // Accepts "training-3.1.0", "training_3.1.0" and a bare "3.1.0" (training).
  static bool parse(const std::string& text, RulesetId* out);
};

// The folder under `root`/compliance_checker/ that holds the rule set:
// <usage>_<version> ("training_1.0.0"), or <version> alone ("1.0.0"), as the
// consortium's Training releases up to 1.0 named them; "" when neither is there.
std::string ruleset_folder(const std::string& root, const RulesetId& id);

enum class LoadMode {
  Eager,  // parse and compile every file now; any error fails the load
  Lazy,   // find the files now; parse and compile a file the first time it is used
};

class RuleSet {
 public:
  // Loads the YAML files of `<root>/compliance_checker/<ruleset_folder>/`. On
  // failure returns null and sets *error. Lazy: a file's errors surface when
  // it is first used (file() and load_errors()), as the consortium's checker
  // only reads the files a log enqueues.
  static std::unique_ptr<RuleSet> load(const std::string& root, const RulesetId& id, std::string* error,
                                       LoadMode mode = LoadMode::Eager);

  const RulesetId& id() const { return id_; }
  const std::string& root() const { return root_; }
  // Root of the compliance-checker tree that enqueue_config paths are relative to.
  std::string checker_root() const { return root_ + "/compliance_checker"; }
  // The set's folder under compliance_checker/ and rcp_checker/ (ruleset_folder).
  const std::string& folder() const { return folder_; }
  std::string rcp_dir() const { return root_ + "/rcp_checker/" + folder_; }
  std::string entry() const { return folder_ + "/common.yaml"; }
  // null when `rel` is not part of the rule set, or (with *why set) when
  // the file does not load. Compiles the file on first use, once; safe to
  // call from several threads.
  const RuleFile* file(const std::string& rel, std::string* why = nullptr) const;
  // Compiles every file not compiled yet. False with *error on the first that fails.
  bool compile_all(std::string* error) const;
  // Errors of files that failed to load so far (each once).
  std::vector<std::string> load_errors() const;
  size_t file_count() const { return slots_.size(); }
  size_t compiled_count() const;  // files parsed and compiled so far
  // The file enqueue_config names: `rel` is resolved from checker_root(), as
  // the consortium does, so a rule file may enqueue another round's file
  // ("training_3.1.0/closed_resnet_lars.yaml" from training_4.0.0). Files
  // outside the rule set's own folder are loaded on first use and kept.
  // null, with *why set, when there is no such file, it leaves the root, or
  // it does not load.
  const RuleFile* resolve(const std::string& rel, std::string* why) const;
  // sha256 over the rule files (names and bytes), for provenance.
  // Computed on first use; safe to call from several threads.
  const std::string& sha256() const;

 private:
  struct Slot {
    std::string path;
    std::once_flag once;
    std::atomic<bool> done{false};
    std::unique_ptr<RuleFile> file;
    std::string error;
  };
  RulesetId id_;
  std::string root_;
  std::string folder_;
  std::map<std::string, std::unique_ptr<Slot>> slots_;
  mutable std::mutex errors_mu_;
  mutable std::vector<std::string> errors_;
  // Other folders' files, loaded by resolve(); failures are kept as messages.
  mutable std::mutex extra_mu_;
  mutable std::map<std::string, std::unique_ptr<RuleFile>> extra_;
  mutable std::map<std::string, std::string> extra_errors_;
  mutable std::once_flag sha256_once_;
  mutable std::string sha256_;
};

// Loads one YAML rule file (used by RuleSet::load and by tests).
bool load_rule_file(const std::string& path, const std::string& rel, RuleFile* out, std::string* error);

// Lists the ruleset ids found under a rules root ("training-3.1.0", ...).
std::vector<std::string> list_rulesets(const std::string& root);

}  // namespace referee::rules

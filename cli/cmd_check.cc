#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/output.h"
#include "mllog/reader.h"
#include "rules/compliance.h"
#include "rules/source.h"

namespace referee::cli {

Command check_command() {
  return {"check", "Check result logs against a rule set, file by file", [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::vector<std::string> files;
              std::string ruleset;
              std::string rules;
              bool json = false;
              bool quiet = false;
            };
            auto o = std::make_shared<Opts>();
            sub.add_option("FILE", o->files, "result log files (result_N.txt)")->required();
            add_ruleset_options(sub, &o->ruleset, &o->rules);
            sub.add_flag("--json", o->json, "print JSON (schema referee.check/1)");
            sub.add_flag("-q,--quiet", o->quiet, "print failing files only");
            return [o]() -> int {
              LoadedRules loaded;
              if (!load_rules("check", o->ruleset, o->rules, &loaded, /*with_facts=*/false)) return kCannotCheck;
              const rules::RuleSet* rs = loaded.ruleset.get();
              const rules::RuleSource& src = loaded.source;
              std::string error;
              mllog::LogReader reader;
              mllog::ParsedLog log;
              bool any_fail = false, any_unreadable = false;
              bool color = use_color(std::cout);
              mllog::JsonWriter w;
              if (o->json) {
                w.begin_object();
                w.key("schema").value("referee.check/1");
                w.key("referee_version").value(REFEREE_VERSION);
                w.key("ruleset").value(rs->id().id());
                w.key("rules").begin_object().key("source").value(src.root).key("sha256").value(rs->sha256()).end_object();
                w.key("files").begin_object();
              }
              for (const auto& path : o->files) {
                mllog::FileBuffer buf;
                if (!buf.open(path, &error)) {
                  any_unreadable = true;
                  std::cerr << "referee check: " << error << "\n";
                  if (o->json) w.key(path).begin_object().key("compliant").value(false).key("error").value(error).end_object();
                  continue;
                }
                reader.parse(buf.view(), &log);
                rules::FileVerdict v = rules::check_log(*rs, log);
                any_fail |= !v.compliant;
                if (o->json) {
                  w.key(path).begin_object();
                  w.key("compliant").value(v.compliant);
                  w.key("mllog_lines").value(static_cast<long long>(v.mllog_lines));
                  write_findings_json(w, "errors", v.errors);
                  write_findings_json(w, "warnings", v.warnings);
                  w.end_object();
                  continue;
                }
                if (v.compliant && o->quiet) continue;
                std::cout << (v.compliant ? paint(color, "32", "PASS") : paint(color, "31", "FAIL")) << " " << path
                          << " (" << v.mllog_lines << " MLLOG lines, " << rs->id().id() << ")\n";
                for (const auto& f : v.errors) print_finding(std::cout, path, f, "  ");
                for (const auto& f : v.warnings) {
                  std::cout << "  " << paint(color, "33", "warning") << " ";
                  print_finding(std::cout, path, f, "");
                }
              }
              if (o->json) {
                w.end_object();
                w.key("verdict").value(any_unreadable ? "error" : any_fail ? "fail" : "pass");
                w.end_object();
                std::cout << w.str() << "\n";
              }
              if (any_unreadable || rules_broken("check", *rs)) return kCannotCheck;
              return any_fail ? kFail : kPass;
            };
          }};
}

}  // namespace referee::cli

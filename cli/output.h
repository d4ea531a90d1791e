// Shared printing for check and check-package: findings as the README shows them.
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include "mllog/json_writer.h"
#include "rules/compliance.h"
#include "rules/package.h"
#include "rules/source.h"

namespace referee::cli {

// `path:LINE: rule: message` then indented expected / found / hint lines.
void print_finding(std::ostream& os, const std::string& path, const rules::Finding& f, const char* indent);
void write_finding_json(mllog::JsonWriter& w, const rules::Finding& f);
// `"<key>": [finding, ...]` (an empty array when there are none).
void write_findings_json(mllog::JsonWriter& w, const char* key, const std::vector<rules::Finding>& findings);

// Colour only on a terminal (and never when NO_COLOR is set).
bool use_color(std::ostream& os);
std::string paint(bool on, const char* code, const std::string& text);

// check-package's human report of one package (cmd_check_package.cc), also
// printed by `referee package` once it has assembled one.
void print_package_report(const rules::PackageReport& r, const rules::RuleSet& rs, const rules::RuleSource& src,
                          bool verbose, std::ostream& os);

}  // namespace referee::cli

// `referee package`: what a submission holds beyond the results and system
// descriptions `referee run` writes, assembled into the organisation's
// folder the way MLCommons lays it out:
//
//   <org>/benchmarks/<benchmark>/implementations/<implementation>/
//       the implementation's source (a folder given per benchmark: the files
//       git tracks there, else every regular file) and a README.md saying how
//       the results were made (command, rule set, seeds, commit), from the
//       run manifest;
//   <org>/results/<system>/<benchmark>/power/result_<n>/node_<i>.txt, sw_<i>.txt
//       power logs, where power was measured (a folder given per benchmark);
//   <org>/results/<system>/<benchmark>/package_checker_params
//       "rcp-bypass" or "seed-checker-bypass", when asked (one per file: the
//       consortium's checker compares whole lines, so only a last line without
//       a line end counts);
//
// and, once checked, the organisation's folder as one tarball. Each folder is
// written beside its place and swapped in whole (base::swap_install_dir); the
// tarball through a temporary file and a rename: an interrupted run leaves the
// package as it was.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace referee::harness {

struct AssembleOptions {
  std::string org_dir;                        // <out>/<org>: holds results/ and systems/
  std::map<std::string, std::string> code;    // benchmark -> its implementation's folder (copied)
  std::map<std::string, std::string> power;   // benchmark (or system/benchmark) -> folder of result_<n>/ power logs
  std::set<std::string> rcp_bypass, seed_bypass;  // benchmarks (or system/benchmark)
  std::string implementation = "referee";     // implementations/<name>
};

struct Assembled {
  std::vector<std::string> wrote;     // what was written, one line each, relative to org_dir
  std::vector<std::string> warnings;  // what MLCommons expects and the package still lacks
};

// Assembles what `options` asks into the package. False with *error (nothing
// half-written) when the package, a folder given or a request is wrong.
bool assemble_package(const AssembleOptions& options, Assembled* out, std::string* error);

// The organisation's folder as <org>/... in a gzip-compressed tar at `path`
// (pax format; through "<path>.tmp-<pid>" and a rename). *files = the files
// it holds.
bool write_tarball(const std::string& org_dir, const std::string& path, size_t* files, std::string* error);

// What would keep write_tarball from writing `path` for `org_dir`, said
// before anything is assembled: its folder missing or not writable, the path
// a folder, or inside the organisation's folder (the next tarball would hold
// this one). "" when none.
std::string tarball_problem(const std::string& org_dir, const std::string& path);

}  // namespace referee::harness

// Terminal tables: submissions/table.h, where the questions' renderer
// (submissions/render.h) and the commands share them.
#pragma once

#include "submissions/table.h"

namespace referee::cli {

using submissions::fixed;
using submissions::percent;
using submissions::Table;

}  // namespace referee::cli

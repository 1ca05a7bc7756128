// `fleetsim validate --html FILE`: the validation as a self-contained page (inline SVG, no
// scripts): predicted vs measured on log–log axes, one colour per model family (collective rows:
// per operation), with the ±10 % and ±25 % bands; the histogram of signed errors; MAPE and mean
// signed error per family and per system; every row with its status and, for skipped rows, the
// reason. Rows are compared in their own unit, so the diagonal and the bands hold for every row.
#pragma once

#include <string>

#include "validate/validate.h"

namespace fleetsim {

std::string validation_html(const ValidationReport& rep);

}  // namespace fleetsim

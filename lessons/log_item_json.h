// A lesson's log item (transcript.h) as a JSON object, for a classroom's laptops, which tell
// the teacher's window each item their rank records (core/io/classroom_wire.h): the window
// merges the ranks' items into the lesson's transcript as the run goes.
#pragma once

#include <string>
#include <string_view>

#include "lessons/transcript.h"

namespace dsgd::lessons {

// {"kind":"send","peer":1,"tag":0,"bytes":8,"shown":true,"preview":[1,-1]}; fields at their
// default are left out.
std::string log_item_json(const LogItem& item);
// DataError naming what is wrong for anything log_item_json() does not write.
LogItem log_item_from_json(std::string_view text);

}  // namespace dsgd::lessons

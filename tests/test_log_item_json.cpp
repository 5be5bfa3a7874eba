// A lesson's log items as a classroom's laptops send them to the teacher's window
// (lessons/log_item_json.h): each kind reads back as written, defaults left out, and what
// is not an item is refused with a reason.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "lessons/log_item_json.h"

using namespace dsgd;
using namespace dsgd::lessons;

TEST_CASE("a lesson's log items read back as written", "[lessons][classroom]") {
  const std::vector<LogItem> items{
      {.kind = LogItem::Kind::say, .text = "Both ranks start with zeros."},
      {.kind = LogItem::Kind::print, .text = "Rank 1 has data [1, -1]"},
      {.kind = LogItem::Kind::section, .text = "tags"},
      {.kind = LogItem::Kind::send,
       .peer = 1,
       .tag = 2,
       .bytes = 4000,
       .shown = false,
       .preview = {1, -1, 0.5f, 3}},
      {.kind = LogItem::Kind::recv, .peer = 0, .tag = 2, .bytes = 4000},
      {.kind = LogItem::Kind::call, .peer = 3, .text = "rank 3: recv from rank 0"}};
  for (const LogItem& item : items) {
    const LogItem back = log_item_from_json(log_item_json(item));
    INFO(log_item_json(item));
    CHECK(back.kind == item.kind);
    CHECK(back.peer == item.peer);
    CHECK(back.tag == item.tag);
    CHECK(back.bytes == item.bytes);
    CHECK(back.shown == item.shown);
    CHECK(back.preview == item.preview);
    CHECK(back.text == item.text);
  }
  CHECK(log_item_json({.kind = LogItem::Kind::say, .text = "x"}) == R"({"kind":"say","text":"x"})");
}

TEST_CASE("what is not a lesson's log item is refused with a reason", "[lessons][classroom]") {
  const auto why = [](const std::string& text) {
    try {
      log_item_from_json(text);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(why(R"({"kind":"shout"})").find("of kind 'shout'") != std::string::npos);
  CHECK(why(R"({"text":"no kind"})").find("not a lesson item") != std::string::npos);
  CHECK(why(R"({"kind":"send","peer":"one"})").find("not a lesson item") != std::string::npos);
  CHECK(why("[1,2]").find("not a lesson item") != std::string::npos);
}

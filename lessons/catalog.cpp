// The list of lessons: number, directory, program, and how many ranks each runs on.
#include "lessons/exercise_spec.h"
#include "lessons/lesson.h"

namespace dsgd::lessons {

void lesson_01(LessonContext& ctx);
void lesson_02(LessonContext& ctx);
void lesson_03(LessonContext& ctx);
void lesson_04(LessonContext& ctx);
void lesson_05(LessonContext& ctx);
void lesson_06(LessonContext& ctx);
void lesson_07(LessonContext& ctx);
void lesson_08(LessonContext& ctx);
void lesson_09(LessonContext& ctx);
void lesson_10(LessonContext& ctx);
void lesson_11(LessonContext& ctx);
void lesson_12(LessonContext& ctx);
void lesson_13(LessonContext& ctx);

std::vector<LessonInfo> lesson_catalog() {
  return {
      {.number = 1, .dir = "01-ranks", .run = lesson_01, .default_nodes = 4},
      {.number = 2,
       .dir = "02-point-to-point",
       .run = lesson_02,
       .default_nodes = 2,
       .min_nodes = 2},
      {.number = 3,
       .dir = "03-nonblocking-deadlock",
       .run = lesson_03,
       .default_nodes = 2,
       .min_nodes = 2,
       .exercise = &ring_shift_exercise()},
      {.number = 4,
       .dir = "04-collectives",
       .run = lesson_04,
       .default_nodes = 4,
       .exercise = &tree_broadcast_exercise()},
      {.number = 5,
       .dir = "05-own-allreduce",
       .run = lesson_05,
       .default_nodes = 4,
       .exercise = &ring_all_reduce_exercise()},
      {.number = 6,
       .dir = "06-why-synchronise",
       .run = lesson_06,
       .default_nodes = 4,
       .exercise = &average_gradients_exercise()},
      {.number = 7, .dir = "07-data-parallel", .run = lesson_07, .default_nodes = 4},
      {.number = 8,
       .dir = "08-model-parallel",
       .run = lesson_08,
       .default_nodes = 3,
       .min_nodes = 2,
       .max_nodes = 6},
      {.number = 9, .dir = "09-failures", .run = lesson_09, .default_nodes = 4, .min_nodes = 2},
      {.number = 10,
       .dir = "10-communication-cost",
       .run = lesson_10,
       .default_nodes = 4,
       .min_nodes = 2},
      {.number = 11, .dir = "11-launching", .run = lesson_11, .default_nodes = 3, .min_nodes = 2},
      {.number = 12,
       .dir = "12-pros-and-cons",
       .run = lesson_12,
       .default_nodes = 4,
       .min_nodes = 2},
      {.number = 13, .dir = "13-ddp", .run = lesson_13, .default_nodes = 4, .min_nodes = 2},
  };
}

}  // namespace dsgd::lessons

// Catch2 v2 main, compiled once.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

// int_model_fixtures.h: the integer model fixtures of tests/data/int_models as
// the build embeds them (embed-int-models.cmake writes the arrays).
#pragma once

#include <cstddef>
#include <cstdint>

struct IntModelFixture {
  const char* name;
  const uint8_t* model;  // the .attn file, 16-byte aligned
  size_t model_size;
  const uint8_t* expect;  // NAME.expect (tests/int_model_fixture.h), 16-byte aligned
  size_t expect_size;
};

extern const IntModelFixture kIntModelFixtures[];
extern const int kIntModelFixtureCount;

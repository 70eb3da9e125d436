// Tests of DataSet: fields opened together, equal sample counts, and the
// gather that copies a batch of samples.
#include "runtime/data/DataSet.h"

#include "io_TestSupport.h"

namespace modelc::rt {
namespace {

using test::failsWith;
using test::ScratchDir;

using Kind = FieldSpec::Kind;

class DataSetTest : public testing::Test {
protected:
  /// A raw u8 file of `count` samples of `width` bytes, sample i filled
  /// with i.
  FieldSpec rawField(const std::string &name, int count, int width) {
    std::string bytes;
    for (int i = 0; i < count; ++i)
      bytes.append(size_t(width), char(i));
    test::writeBytes(dir_.path(name + ".bin"), bytes);
    return {name,       DType::U8,  {width},
            Kind::File, Kind::File, dir_.path(name + ".bin"),
            ""};
  }
  ScratchDir dir_;
};

TEST_F(DataSetTest, GatherCopiesTheRequestedSamples) {
  Result<DataSet> data = DataSet::open(
      "train", {rawField("image", 10, 4), rawField("label", 10, 1)});
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->name(), "train");
  EXPECT_EQ(data->numSamples(), 10);
  ASSERT_EQ(data->numFields(), 2u);
  EXPECT_EQ(data->field(1).name, "label");
  EXPECT_EQ(data->sampleBytes(0), 4u);
  const int64_t indices[] = {7, 2, 9};
  std::vector<uint8_t> images(12), labels(3);
  data->gather(0, indices, 3, images.data());
  data->gather(1, indices, 3, labels.data());
  EXPECT_EQ(images, (std::vector<uint8_t>{7, 7, 7, 7, 2, 2, 2, 2, 9, 9, 9, 9}));
  EXPECT_EQ(labels, (std::vector<uint8_t>{7, 2, 9}));
}

TEST_F(DataSetTest, MismatchedSampleCountsNameBothFilesAndCounts) {
  FieldSpec image = rawField("image", 10, 4), label = rawField("label", 9, 1);
  Result<DataSet> data = DataSet::open("train", {image, label});
  EXPECT_TRUE(failsWith(data, image.path, "data set 'train': field 'image'"));
  EXPECT_TRUE(failsWith(data, label.path, "has 10 samples but field 'label'"));
  EXPECT_TRUE(failsWith(data, label.path, "has 9"));
}

TEST_F(DataSetTest, AFieldsErrorIsTheDataSetsError) {
  FieldSpec image = rawField("image", 10, 4);
  FieldSpec label = rawField("label", 10, 1);
  label.dtype = DType::F32; // 10 bytes is not a whole number of f32s
  EXPECT_TRUE(failsWith(DataSet::open("train", {image, label}), label.path,
                        "not a multiple"));
}

TEST_F(DataSetTest, EmptyDataSetsAreErrors) {
  EXPECT_TRUE(failsWith(DataSet::open("nothing", {}), "nothing", "no fields"));
  FieldSpec empty = rawField("image", 0, 4);
  EXPECT_TRUE(
      failsWith(DataSet::open("train", {empty}), empty.path, "has no samples"));
}

} // namespace
} // namespace modelc::rt

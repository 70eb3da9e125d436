// Tests against the real Fashion-MNIST files, when the machine has them:
// the gzip idx loader on full-size data, and the counts a model relies on.
#include "runtime/data/DataSet.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <numeric>

namespace modelc::rt {
namespace {

const std::string kDir = "/usr/share/datasets/fashion-mnist/";

FieldSpec imageField(const std::string &file) {
  return {"image",
          DType::U8,
          {28, 28},
          FieldSpec::Kind::Idx,
          FieldSpec::Kind::File,
          kDir + file,
          ""};
}

FieldSpec labelField(const std::string &file) {
  return {
      "label",     DType::U8, {}, FieldSpec::Kind::Idx, FieldSpec::Kind::File,
      kDir + file, ""};
}

class FashionMnistTest : public testing::Test {
protected:
  void SetUp() override {
    for (const char *file :
         {"train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
          "t10k-labels-idx1-ubyte.gz"})
      if (!std::filesystem::exists(kDir + file))
        GTEST_SKIP() << "Fashion-MNIST is not installed in " << kDir;
  }
};

TEST_F(FashionMnistTest, TrainLabelsAreBalancedOverTenClasses) {
  Result<std::unique_ptr<FieldSource>> labels =
      openFieldSource(labelField("train-labels-idx1-ubyte.gz"));
  ASSERT_TRUE(labels.ok()) << labels.status().message();
  ASSERT_EQ((*labels)->numSamples(), 60000);
  std::vector<int> perClass(10);
  for (int64_t i = 0; i < 60000; ++i) {
    uint8_t label;
    (*labels)->readSample(i, &label);
    ASSERT_LT(label, 10);
    ++perClass[label];
  }
  // Fashion-MNIST has 6000 training images of each class.
  for (int count : perClass)
    EXPECT_EQ(count, 6000);
}

TEST_F(FashionMnistTest, TestSetOpensAsADataSet) {
  Result<DataSet> data =
      DataSet::open("fashion_test", {imageField("t10k-images-idx3-ubyte.gz"),
                                     labelField("t10k-labels-idx1-ubyte.gz")});
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->numSamples(), 10000);
  EXPECT_EQ(data->sampleBytes(0), 784u);
  std::vector<int64_t> indices(10000);
  std::iota(indices.begin(), indices.end(), int64_t(0));
  std::vector<uint8_t> images(784 * 10000), labels(10000);
  data->gather(0, indices.data(), 10000, images.data());
  data->gather(1, indices.data(), 10000, labels.data());
  // The first test image is an ankle boot (class 9), not a blank image.
  EXPECT_EQ(labels[0], 9);
  EXPECT_GT(std::accumulate(images.begin(), images.begin() + 784, 0), 0);
  double mean = std::accumulate(images.begin(), images.end(), 0.0) /
                double(images.size());
  // The mean pixel of the test set is about 73 (0.286 * 255).
  EXPECT_NEAR(mean, 73.0, 3.0);
}

TEST_F(FashionMnistTest, MismatchedTrainAndTestFilesAreCaught) {
  Result<DataSet> data =
      DataSet::open("mixed", {imageField("t10k-images-idx3-ubyte.gz"),
                              labelField("train-labels-idx1-ubyte.gz")});
  ASSERT_FALSE(data.ok());
  EXPECT_NE(data.status().message().find("has 10000 samples"),
            std::string::npos)
      << data.status().message();
  EXPECT_NE(data.status().message().find("has 60000"), std::string::npos);
}

} // namespace
} // namespace modelc::rt

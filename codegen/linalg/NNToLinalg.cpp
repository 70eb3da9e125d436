// populateNNToLinalgPatterns: the neural-network op family of
// --mdl-lower-to-linalg, one populate function per NNToLinalg*.cpp file.
#include "codegen/linalg/Patterns.h"

void modelc::populateNNToLinalgPatterns(mlir::RewritePatternSet &patterns) {
  populateMatmulToLinalgPatterns(patterns);
  populateConvToLinalgPatterns(patterns);
  populatePoolToLinalgPatterns(patterns);
  populatePoolGradToLinalgPatterns(patterns);
  populateNormToLinalgPatterns(patterns);
  populateEmbeddingToLinalgPatterns(patterns);
  populateLossToLinalgPatterns(patterns);
  populateMeanReductionToLinalgPatterns(patterns);
  populateGeluToLinalgPatterns(patterns);
  populateRecurrentToLinalgPatterns(patterns);
  populateAttentionToLinalgPatterns(patterns);
}

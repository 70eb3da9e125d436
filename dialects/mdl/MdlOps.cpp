// The generated op classes of the mdl dialect and the custom assembly
// directives they use. Verifiers and builders live in the per-family files.
#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::mdl;

// `(784.0)`, `(0.0, 0.02)` or `()`: the arguments of a parameter initialiser.
static ParseResult parseInitArgs(OpAsmParser &parser,
                                 DenseF64ArrayAttr &initArgs) {
  SmallVector<double> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Paren, [&] {
        return parser.parseFloat(values.emplace_back());
      }))
    return failure();
  initArgs = parser.getBuilder().getDenseF64ArrayAttr(values);
  return success();
}

static void printInitArgs(OpAsmPrinter &printer, Operation *,
                          DenseF64ArrayAttr initArgs) {
  printer << '(';
  llvm::interleaveComma(initArgs.asArrayRef(), printer, [&](double value) {
    printer.printFloat(llvm::APFloat(value));
  });
  printer << ')';
}

#define GET_OP_CLASSES
#include "dialects/mdl/MdlOps.cpp.inc"

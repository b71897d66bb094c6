/**
 * The contract layer's corpus suite (skipped, saying so, on a clone without ../shared):
 * both validators agree with every case of the peer (Rust reference) matrix in ../shared/peers.
 */
import { corpusSuite, peerMatrix } from "../../test/support.js";
import { matrixAgreementTests } from "../../test/matrix-agreement.js";

corpusSuite("contract", () => {
  matrixAgreementTests("peer (Rust reference) matrix", peerMatrix, 12);
});

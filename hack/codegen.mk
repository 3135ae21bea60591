# Code generation targets; the Makefile includes this file.

##@ Code generation

.PHONY: codegen
codegen: ## Regenerate the generated code of _output/kueue with Kueue's pinned generators (after editing its API types).
	hack/codegen.sh $(KUEUE_DIR)

.PHONY: verify-codegen
verify-codegen: ## Fresh patched tree: fail if the real generators change any generated file.
	hack/verify-codegen.sh

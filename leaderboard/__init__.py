"""ChemRobust host side: manifests, images, sandbox, store, ranking and site."""

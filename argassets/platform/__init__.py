"""The platform every study shares, given the studies as arguments: judging, registry, operations,
storage, reporting, the pairwise core, resources."""

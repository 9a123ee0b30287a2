"""The judge-sensitivity matrix (`memeval judge-matrix`): saved answers re-judged under several criteria."""

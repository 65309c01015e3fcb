export {
  BuildStore,
  defaultBuildsDir,
  KEPT_BUILDS_PER_SERVICE,
  type BuildDirectory,
  type BuildRef,
  type KeptBuild,
} from './build-store';

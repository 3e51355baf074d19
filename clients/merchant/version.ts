/** Kept equal to package.json's version by a unit test (the build has no JSON import to rely on). */
export const SDK_NAME = '@paycollect/merchant';
export const SDK_VERSION = '0.1.0';

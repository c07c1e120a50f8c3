/**
 * The test kit's shared test fixtures: the repository's `eventually` and `pod` (test/fixtures), one of each
 * for every test.
 */
export { eventually } from "../../../test/fixtures/eventually.js"
export { pod } from "../../../test/fixtures/objects.js"

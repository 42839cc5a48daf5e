export default {
  providers: [],
};
